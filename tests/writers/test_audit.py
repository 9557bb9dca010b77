"""writers/audit.py: the --audit lines: totals per flag kind (largest first), each kind's rows with
time, share, name, shapes as 12×192, calls and the detail; wrapped at spaces only."""

from __future__ import annotations

import io

from rich.console import Console

from perfreport.tables import columns as C
from perfreport.writers.audit import NO_FLAGS, flag_lines, print_audit, shape_text, wrap


def test_shape_text():
    assert shape_text("(12, 192), (8, 64, 192), (8), (), ()") == "12×192, 8×64×192, 8"
    assert shape_text("[(2, 3), (4)], (5)") == "[2×3, 4], 5"
    assert shape_text("(), (3)") == "(), 3"
    assert shape_text(None) == "" and shape_text("") == ""


def _row(flag, t, pct, name, dims, n, detail):
    return {
        C.FLAG: flag,
        C.TIME_AFFECTED_US: t,
        C.PERCENT_OF_TOTAL_PCT: pct,
        C.NAME: name,
        C.INPUT_DIMS: dims,
        C.COUNT: n,
        C.DETAIL: detail,
    }


ROWS = [
    _row("host link", 5.0, 1.0, "aten::copy_", "(4, 4)", 3, "judged on the host link"),
    _row(
        "above roofline", 900.0, 45.0, "aten::mm", "(12, 192), (192, 8)", 1200, "112% of roofline: FLOPs over-counted?"
    ),
    _row("host link", 7.5, 1.5, "aten::to", "", 1, "pinned copy"),
]


def test_flag_lines_largest_kind_first_with_top_and_more():
    lines = flag_lines(["above roofline: 1 row", "host link: 2 rows"], ROWS, count=4, top=1)
    assert lines == [
        "flags: above roofline: 1 row",
        "flags: host link: 2 rows",
        "above roofline, by GPU time affected:",
        "         900.0 µs  45.0%  aten::mm [12×192, 192×8] x1,200",
        "      112% of roofline: FLOPs over-counted?",
        "host link, by GPU time affected:",
        "           5.0 µs   1.0%  aten::copy_ [4×4] x3",
        "      judged on the host link",
        "  ... 1 more host link rows: see the flags column of unified_perf_summary",
        "  ... 1 more flagged rows not listed: see unified_perf_summary",
    ]
    assert flag_lines([], [], 0) == [NO_FLAGS]


def test_wrap_at_spaces_only_with_the_indent():
    line = "      " + "word " * 10 + "a" * 30
    parts = wrap(line, 30)
    assert all(len(p) <= 30 or p.strip() == "a" * 30 for p in parts)
    assert parts[-1] == "      " + "a" * 30  # a word longer than the width stays whole
    assert all(p.startswith("      ") for p in parts[1:])  # continuation: min(6, 4) + 2 spaces
    assert wrap("short", 80) == ["short"]


def test_print_audit_of_a_report_without_coverage_or_sheet():
    class Report:
        coverage = None

        def sheet(self, name):
            raise KeyError(name)

    buf = io.StringIO()
    print_audit(Report(), Console(file=buf, width=80))
    assert buf.getvalue().splitlines() == ["self-audit", "flags: no unified_perf_summary sheet, nothing to audit"]
