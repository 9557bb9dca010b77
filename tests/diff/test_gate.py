"""diff/gate.py: ``--fail-if-slower PCT`` on the total kernel time and the top rows of diff_ops."""

from __future__ import annotations

from types import SimpleNamespace

from perfreport.diff.gate import regressions
from perfreport.tables import columns as C
from perfreport.tables.sheet import Sheet


def _report(a, b, ops):
    sheets = {
        "diff_summary": Sheet.from_records("diff_summary", [{C.A: a, C.B: b}], [C.A, C.B]),
        "diff_ops": Sheet.from_records(
            "diff_ops",
            [{C.NAME: n, C.INPUT_DIMS: d, C.TIME_A_US: ta, C.TIME_B_US: tb, C.MATCH: m} for n, d, ta, tb, m in ops],
            [C.NAME, C.INPUT_DIMS, C.TIME_A_US, C.TIME_B_US, C.MATCH],
        ),
    }
    return SimpleNamespace(sheet=sheets.__getitem__)


OPS = [
    ("aten::mm", "(4, 8)", 100.0, 112.0, "exact"),  # +12%
    ("aten::add", "(4,)", 50.0, 54.0, "exact"),  # +8%
    ("aten::gelu", "(4,)", 0.0, 7.0, "appeared"),
]


def test_the_gate_passes_within_the_threshold():
    assert regressions(_report(1000.0, 1049.0, OPS[1:2]), 10.0) == []


def test_total_and_rows_beyond_the_threshold():
    lines = regressions(_report(1000.0, 1100.5, OPS), 10.0)
    assert lines == [
        "total GPU kernel time 1000.0 -> 1100.5 µs (+10.1%)",
        "aten::mm [(4, 8)] 100.0 -> 112.0 µs (+12.0%, exact)",
        "aten::gelu [(4,)] 0.0 -> 7.0 µs (appeared, appeared)",
    ]


def test_exactly_pct_slower_is_not_a_regression_and_top_limits_the_rows():
    assert regressions(_report(1000.0, 1100.0, OPS), 10.0, top=1) == [
        "aten::mm [(4, 8)] 100.0 -> 112.0 µs (+12.0%, exact)"
    ]
    assert regressions(_report(1000.0, 1100.0, OPS), 5.0, top=0) == [
        "total GPU kernel time 1000.0 -> 1100.0 µs (+10.0%)"
    ]
