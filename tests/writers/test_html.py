"""HTML report: one offline file, roofline points and ceilings, timeline, sortable table."""

from __future__ import annotations

import re

import pytest

from perfreport.report import Report
from perfreport.specs import load_arch
from perfreport.tables.sheet import Sheet
from perfreport.writers.html import html_text
from perfreport.writers.roofline_svg import ceilings, points
from perfreport.writers.summary import unified_rows
from tests.conftest import FIX
from tests.kit.cached import analyzed


@pytest.fixture(scope="module")
def h100():
    return analyzed(FIX / "h100_qwen_0.5b.json.gz")


@pytest.fixture(scope="module")
def page(h100, tmp_path_factory):
    p = tmp_path_factory.mktemp("html") / "r.html"
    h100.to_html(p)
    return p.read_text(encoding="utf-8")


def test_self_contained(page):
    assert "Content-Security-Policy" in page and "default-src 'none'" in page
    assert not re.search(r"\b(src|href)\s*=", page)  # nothing to load
    assert "http://" not in page and "https://" not in page.split("<h2>GPU spec</h2>")[0]
    assert len(page) < 400_000


def test_one_point_per_row_with_flops_and_bytes(h100, page):
    rows = unified_rows(h100)
    placed = points(rows)
    assert len(placed) == page.count('<circle class="pt"')
    assert 10 < len(placed) < len(rows)  # unlinked kernels have no model: left out
    mm = next(r for r in placed if r["name"] == "aten::mm")
    assert "aten::mm" in page and "FLOP/byte: " in page
    assert mm["ai"] > 100  # a GEMM is far right of the elementwise ops


def test_ceilings_of_the_precisions_used(h100, page):
    c = dict(ceilings(h100.spec, points(unified_rows(h100))))
    assert c["matrix_bf16"] == 989.4  # H100 SXM dense BF16
    # memory line + one flat line per precision
    assert page.count('class="ceiling"') == 1 + len(c)
    # ridge of BF16 on H100 SXM: 989.4 TFLOP/s / 3.35 TB/s = 295.3 FLOP/byte
    assert "ridge at 295 FLOP/byte" in page


def test_coverage_statement_on_top(h100, page):
    from perfreport.writers.roofline_svg import escape
    from perfreport.writers.summary import coverage_lines

    cov = coverage_lines(h100)
    assert cov and f'id="coverage"><p>{escape(cov[0])}</p>' in page  # kernel names hold < >
    assert all(f"<p>{escape(line)}</p>" in page for line in cov)
    assert page.index('id="coverage"') < page.index('id="roofline"')


def test_timeline_and_table(h100, page):
    assert "<h2>GPU timeline</h2>" in page and "45.6 ms (92%)" in page  # computation 45.645 ms of 49.653
    body = page.split('<table id="top">')[1].split("</table>")[0]
    assert body.count("<tr>") == 1 + 50  # header + top 50 rows
    assert 'data-v="4055.251"' in body  # aten::mm time sum, sortable by value
    assert "document.documentElement.setAttribute('data-ready','1')" in page


def test_text_is_escaped_and_coverage_shown():
    sh = Sheet(
        "unified_perf_summary",
        ["name", "category", "time sum (µs)", "percent (%)", "FLOP/byte", "TFLOP/s mean", "count"],
        [["<script>alert(1)</script>\x07", "GEMM", 10.0, 100.0, 50.0, 5.0, 1]],
    )
    r = Report(source="a<b>.json", sheets=[sh], notes=["n & m"], spec=load_arch("h100"), arch_msg="GPU spec: x")
    r.coverage = type("C", (), {"lines": lambda self: ["coverage: 100% modelled"]})()
    t = html_text(r)
    assert "<script>alert" not in t and "&lt;script&gt;alert(1)&lt;/script&gt; " in t
    assert "\x07" not in t
    assert 'id="coverage"><p>coverage: 100% modelled</p></div>' in t
    assert "a&lt;b&gt;.json" in t and "n &amp; m" in t


def test_no_modelled_rows_says_so():
    sh = Sheet("unified_perf_summary", ["name", "time sum (µs)"], [["x", 1.0]])
    t = html_text(Report(source="s", sheets=[sh], notes=[]))
    assert "nothing to place on a roofline" in t


def test_csp_allows_only_the_page_script_by_hash(page):
    """No 'unsafe-inline' for scripts: the one sorter runs by its SHA-256, any other inline script does not."""
    import base64
    import hashlib
    import re

    from perfreport.writers.html import CSP, SCRIPT
    from perfreport.writers.html_timeline_js import TIMELINE_SCRIPT

    assert "script-src 'unsafe-inline'" not in CSP
    scripts = re.findall(r"<script>(.*?)</script>", page, re.S)
    assert scripts == [TIMELINE_SCRIPT, SCRIPT]  # the time axis's, then the sorter
    for s in scripts:
        digest = base64.b64encode(hashlib.sha256(s.encode()).digest()).decode()
        assert f"'sha256-{digest}'" in CSP.split("script-src")[1]
    assert f'content="{CSP}"' in page


def test_category_colours_are_fixed_across_reports():
    """Issue 23: GEMM was blue in one report and orange in another (palette by time rank)."""
    from perfreport.writers.roofline_svg import CATEGORY_COLOURS, colour_of, colours

    a = colours([{"category": "GEMM", "time": 10.0}, {"category": "SDPA_fwd", "time": 5.0}])
    b = colours([{"category": "SDPA_fwd", "time": 10.0}, {"category": "GEMM", "time": 5.0}])
    assert a["GEMM"] == b["GEMM"] == CATEGORY_COLOURS["GEMM"] and a["SDPA_fwd"] == b["SDPA_fwd"]
    assert colour_of("my_category") == colour_of("my_category")  # unlisted: a stable hash


def test_blank_cells_sort_last():
    from perfreport.writers.html import SCRIPT, top_table

    html = top_table([{"name": "a", "roofline": None, "time": 1.0}, {"name": "b", "roofline": 50.0, "time": 2.0}])
    assert '<td class="n" data-v=""></td>' in html and "-1e300" not in html
    assert "blanks last" in SCRIPT


def test_the_chart_script_zooms_and_pans():
    from perfreport.writers.html import SCRIPT

    for needle in ("'wheel'", "'mousedown'", "'mousemove'", "'dblclick'", "viewBox"):
        assert needle in SCRIPT
