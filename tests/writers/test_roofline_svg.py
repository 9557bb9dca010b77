"""writers/roofline_svg.py: the roofline chart as plain SVG: placeable points, the ceilings the rows
use (ridge = peak / bandwidth), hover text escaped, a paragraph when nothing can be placed."""

from __future__ import annotations

import re
from types import SimpleNamespace
from xml.etree import ElementTree

from perfreport.tables import columns as C
from perfreport.writers.roofline_svg import ceilings, escape, points, roofline_svg

H100 = SimpleNamespace(
    mem_bw_tbps=3.35, peaks={"matrix_bf16": 989.4, "matrix_fp8": 1978.9, "vector_fp32": 67.0, "matrix_fp32": 67.0}
)


def _row(name, ai, tflops, spec="matrix_bf16", time=10.0, cat="GEMM"):
    return {C.NAME: name, "ai": ai, "tflops": tflops, C.COMPUTE_SPEC: spec, "time": time, C.CATEGORY: cat, "count": 1}


def test_points_need_positive_intensity_and_throughput():
    rows = [_row("a", 10.0, 5.0), _row("b", 0.0, 5.0), _row("c", 10.0, None), _row("d", "x", 1.0)]
    assert [r[C.NAME] for r in points(rows)] == ["a"]


def test_ceilings_are_the_specs_the_rows_use_sharing_equal_peaks():
    assert ceilings(H100, [_row("a", 1, 1, "matrix_bf16")]) == [("matrix_bf16", 989.4)]
    both = [_row("a", 1, 1, "vector_fp32"), _row("b", 1, 1, "matrix_fp32")]
    assert ceilings(H100, both) == [("matrix_fp32, vector_fp32", 67.0)]
    # no row names a spec: every matrix peak, largest first
    assert ceilings(H100, [_row("a", 1, 1, "")]) == [
        ("matrix_fp8", 1978.9),
        ("matrix_bf16", 989.4),
        ("matrix_fp32", 67.0),
    ]
    assert ceilings(None, []) == []


def test_escape():
    assert escape('<a href="x">\x07</a>') == "&lt;a href=&quot;x&quot;&gt; &lt;/a&gt;"
    assert escape(None) == ""


def test_the_chart_places_every_point_under_its_ceilings():
    rows = [_row("aten::mm <big>", 300.0, 700.0, time=40.0), _row("aten::add", 0.25, 0.5, cat="elementwise")]
    svg = roofline_svg(rows, H100)
    root = ElementTree.fromstring(svg)  # well-formed XML
    ns = "{http://www.w3.org/2000/svg}" if root.tag.startswith("{") else ""
    circles = [c for c in root.iter(f"{ns}circle") if c.get("class") == "pt"]
    assert len(circles) == 2
    assert "aten::mm &lt;big&gt;" in svg and "aten::mm <big>" not in svg
    # the bf16 ridge: 989.4 / 3.35 = 295 FLOP/byte
    assert "matrix_bf16: 989.4 TFLOP/s (ridge at 295 FLOP/byte)" in svg
    assert "memory: 3.35 TB/s × FLOP/byte" in svg
    big, small = (float(c.get("r")) for c in circles)  # drawn big first
    assert big == 20.0 and small == 3.0 + 17.0 * (10.0 / 40.0) ** 0.5


def test_no_spec_and_no_points():
    assert "no GPU spec: no ceilings (use --arch)" in roofline_svg([_row("a", 1.0, 1.0)], None)
    assert roofline_svg([_row("a", 0.0, 1.0)], H100).startswith("<p>No row has both FLOPs and bytes")
    assert not re.search("<circle", roofline_svg([_row("a", 0.0, 1.0)], H100))
