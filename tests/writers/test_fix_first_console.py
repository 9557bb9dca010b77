"""writers/fix_first_console.py: the first screen's 'what to fix first' lines from the fix_first sheet."""

from __future__ import annotations

from types import SimpleNamespace

from perfreport.tables import columns as C
from perfreport.tables.sheet import Sheet
from perfreport.writers.fix_first_console import fix_first_lines

COLS = [C.PRIORITY, C.KIND, C.WHAT, C.WON_US, C.WON_MIN_US, C.WON_MAX_US, C.SHARE_OF_RUN_PCT, C.CAVEAT]


def _report(rows):
    recs = [dict(zip(COLS, r)) for r in rows]
    sheets = {"fix_first": Sheet.from_records("fix_first", recs, COLS)}

    def sheet(name):
        return sheets[name]

    return SimpleNamespace(sheet=sheet)


def test_no_sheet_or_no_rows_no_lines():
    assert fix_first_lines(SimpleNamespace(sheet=lambda n: {}[n]), 80) == []
    assert fix_first_lines(_report([]), 80) == []


def test_lines_with_bounds_waits_and_the_caveat_legend():
    rows = [
        (1, "roofline gap", "aten::mm to 80% of roofline", 1500.0, 1200.0, 1800.0, 12.5, "bounds"),
        (2, "host wait", "the CPU gap before step 3", 900.0, 0.0, 900.0, 7.25, ""),
        (3, "roofline gap", "aten::add to 80% of roofline", 40.2, 40.0, 40.4, 0.3, ""),
    ]
    lines = [t.plain for t in fix_first_lines(_report(rows), 120)]
    assert lines == [
        "what to fix first (GPU time that could be won, share of the run):",
        "  1.   1,200-1,800 µs  12.5%* aten::mm to 80% of roofline",
        "  2.        <= 900 µs   7.2%  the CPU gap before step 3",
        "  3.            40 µs   0.3%  aten::add to 80% of roofline",
        "  * bounds or suspect inputs: sorted by the lower bound (fix_first: caveat)",
    ]


def test_long_names_are_cut_to_the_width_and_n_rows_shown():
    rows = [(i, "roofline gap", "x" * 200, 10.0, 10.0, 10.0, 1.0, "") for i in range(1, 9)]
    lines = [t.plain for t in fix_first_lines(_report(rows), 60, n=3)]
    assert len(lines) == 4
    assert all(len(s) <= 60 for s in lines[1:]) and lines[1].endswith("x…")
