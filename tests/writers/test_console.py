"""Console summary: fits 80, 120 and 200 columns, numbers never wrap, names shortened in the
middle. Structural checks on a hand-built report and a real fixture; the snapshots of every
view are in tests/writers/test_views.py."""

from __future__ import annotations

import os
import re
from pathlib import Path
from types import SimpleNamespace

import pytest
from rich.console import Console

from perfreport.report import Report
from perfreport.tables.sheet import Sheet
from perfreport.writers import numfmt
from perfreport.writers.console import print_summary, shorten_middle
from tests.conftest import FIX
from tests.kit.cached import analyzed

SNAP = Path(__file__).parent / "snapshots"
KERNEL = (
    "void at::native::vectorized_elementwise_kernel<4, at::native::BinaryFunctor<c10::BFloat16, "
    "c10::BFloat16, c10::BFloat16, at::native::binary_internal::MulFunctor<float> >, "
    "at::detail::Array<char*, 3> >(int, at::native::BinaryFunctor<...>, at::detail::Array<char*, 3>)"
)
COLS = [
    "name",
    "category",
    "count",
    "time sum (µs)",
    "percent (%)",
    "TFLOP/s mean",
    "TB/s mean",
    "bound",
    "roofline mean (%)",
    "flags",
    "input dims",
]


def synthetic(flags=True) -> Report:
    rows = [
        ["aten::mm", "GEMM", 48, 262422.4, 61.3, 610.666, 0.881, "compute", 61.72, "", "(8944, 1024), (1024, 2816)"],
        [f"(unlinked) {KERNEL}", "unlinked", 73, 93935.211, 21.9, None, None, None, None, "", ""],
        [
            "step[DECODE bs=32] [bold]x[/bold]",
            "InferenceAttention_fwd",
            12_345,
            4055.251,
            0.95,
            90.289,
            4.468,
            "memory",
            133.4,
            "above roofline: operands fit in the 50 MiB L2 | assumption: sliding window 4096",
            "(32, 16, 4, 192), (1024, 64, 1, 192)",
        ],
        [
            "aten::mul",
            "BinaryElementwise",
            49,
            999.6,
            0.23,
            0.279,
            2.233,
            "memory",
            66.65,
            "",
            "(16, 559, 1024), (16, 559, 1)",
        ],
        ["aten::add", "BinaryElementwise", 2, 0.512, 0.0001, 0.0004, 0.01, "memory", 0.42, "", "(), ()"],
    ]
    cols = COLS if flags else [c for c in COLS if c != "flags"]
    if not flags:
        rows = [[v for c, v in zip(COLS, r) if c != "flags"] for r in rows]
    tl = Sheet(
        "gpu_timeline",
        ["device", "type", "time (ms)", "percent of total (%)"],
        [
            [0, k, v, 0.0]
            for k, v in [
                ("computation", 400.1),
                ("exposed comm", 12.5),
                ("exposed memcpy", 0.0023),
                ("idle", 15.0),
                ("busy", 412.6),
                ("total", 427.6),
            ]
        ],
    )
    r = Report(
        source="synthetic.json.gz",
        sheets=[tl, Sheet("unified_perf_summary", cols, rows)],
        notes=[],
        arch_msg="GPU spec: NVIDIA H100 SXM5 80GB (given, peak figures)",
    )
    if flags:
        r.coverage = SimpleNamespace(lines=lambda: ["coverage: 97.0% of GPU time has a perf model"])
    return r


def render(report, width, top=15) -> str:
    c = Console(width=width, record=True, file=open(os.devnull, "w"), color_system=None)
    print_summary(report, c, top=top)
    return c.export_text()


def body_lines(text: str) -> list[str]:
    """Lines of the top-ops table below its header rule."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("top ops"))
    rule = next(i for i in range(start, len(lines)) if set(lines[i].strip()) == {"─"})
    out = []
    for line in lines[rule + 1 :]:
        if not line.strip() or line.startswith("flags: "):
            break
        out.append(line)
    return out


def check_no_wrap(report, text, width, top=15):
    from perfreport.writers.summary import top_rows

    assert all(len(line) <= width for line in text.splitlines()), "a line is wider than the console"
    rows = top_rows(report, top)
    lines = body_lines(text)
    assert len(lines) == len(rows), "a row took more than one line: some cell wrapped"
    for r, line in zip(rows, lines):
        for s in (numfmt.time_us(r["time"]), numfmt.pct(r["share"]), numfmt.pct(r["roofline"])):
            assert s in line, (s, line)
        assert line.startswith(shorten_middle(str(r["name"]), 8)[:4])


def test_markup_in_names_is_printed_and_coverage_shown():
    text = render(synthetic(), 200)
    assert "step[DECODE bs=32] [bold]x[/bold]" in text
    assert "coverage: 97.0% of GPU time has a perf model" in text
    assert "R A" in text and "R above roofline" in text  # flag codes and their legend


def test_coverage_lines_headline_whole_details_one_line_each():
    r = synthetic()
    detail = "coverage: top unmodelled ops: " + "; ".join(f"{KERNEL} {i}.0 µs" for i in range(3))
    r.coverage = SimpleNamespace(
        lines=lambda: ["coverage of 427.6 ms GPU time: modelled 97.0%", detail], text=lambda: "unused"
    )
    text = render(r, 80)
    lines = text.splitlines()
    i = lines.index("coverage of 427.6 ms GPU time: modelled 97.0%")
    assert lines[i + 1].startswith("coverage: top unmodelled ops: ") and lines[i + 1].endswith("…")
    assert len(lines[i + 1]) <= 80 and not any(x.startswith(KERNEL[:10]) for x in lines[i + 2 :])


def test_without_flags_or_coverage():
    text = render(synthetic(flags=False), 120)
    assert "flags" not in text and "coverage" not in text
    check_no_wrap(synthetic(flags=False), text, 120)


def test_narrow_keeps_the_essentials():
    text = render(synthetic(), 80)
    head = body_lines(text)[0]
    assert "262 ms" in head and "61%" in head and "compute" in head
    assert (
        "shape"
        not in text.splitlines()[
            text.splitlines().index(next(line for line in text.splitlines() if line.startswith("top ops"))) + 1
        ]
    )
    assert "…" in text  # the long kernel name lost its middle


def test_top_n():
    assert len(body_lines(render(synthetic(), 120, top=2))) == 2


def test_shorten_middle():
    assert shorten_middle("abcdefghij", 5) == "ab…ij"
    assert shorten_middle("abcdefghij", 10) == "abcdefghij"
    assert len(shorten_middle(KERNEL, 37)) == 37


@pytest.fixture(scope="module")
def h100():
    return analyzed(FIX / "h100_qwen_0.5b.json.gz")


@pytest.mark.parametrize("width", [80, 100, 120, 200])
def test_real_trace_fits(h100, width):
    check_no_wrap(h100, render(h100, width), width)


def test_numbers_are_compact(h100):
    text = render(h100, 120)
    assert not re.search(r"\d,\d{3}\.\d{3}", text)  # no full-precision 4,055.251 in the summary
    assert "4.06 ms" in text  # aten::mm: 4,055.251 µs
