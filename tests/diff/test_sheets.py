"""diff/sheets.py: diff_summary, diff_ops (delta = B - A, speedup = A / B, sorted by |delta|),
diff_gpu_timeline (devices paired in sorted order)."""

from __future__ import annotations

import pytest

from perfreport.diff.load import Side
from perfreport.diff.match import Group, Match
from perfreport.diff.sheets import OPS_COLS, build_diff_sheets, ops_rows, timeline_rows
from perfreport.tables import columns as C


def op(name, t, dims="(4,)", n=1):
    return {C.NAME: name, C.INPUT_DIMS: dims, C.INPUT_TYPES: "float", C.CATEGORY: "gemm", C.TIME_SUM_US: t, C.COUNT: n}


def tl(dev, typ, ms, pct):
    return {C.DEVICE: dev, C.TYPE: typ, C.TIME_MS: ms, C.PERCENT_OF_TOTAL_PCT: pct}


def test_ops_rows_delta_speedup_status_and_order():
    ms = [
        Match("name+shapes+dtypes", Group([op("mm", 100.0)]), Group([op("mm", 50.0)])),
        Match("name+category", Group([op("add", 10.0)]), Group([op("add", 30.0, dims="(8,)")])),
        Match("vanished", Group([op("gone", 5.0)]), None),
        Match("name+shapes+dtypes", Group([op("same", 7.0)]), Group([op("same", 7.0)])),
    ]
    rows = ops_rows(ms)
    assert [(r[C.NAME], r[C.STATUS], r[C.DELTA_US], r[C.SPEEDUP_A_PER_B]) for r in rows] == [
        ("mm", "faster", -50.0, 2.0),
        ("add", "slower", 20.0, 10.0 / 30.0),
        ("gone", "vanished", -5.0, None),
        ("same", "same", 0.0, 1.0),
    ]
    # total delta = -50 + 20 - 5 + 0 = -35
    assert [r[C.SHARE_OF_TOTAL_DELTA_PCT] for r in rows] == pytest.approx(
        [100 * 50 / 35, -100 * 20 / 35, 100 * 5 / 35, 0.0]
    )
    add = rows[1]
    assert (add[C.INPUT_DIMS], add[C.side_b(C.INPUT_DIMS)], add[C.side_b(C.NAME)]) == ("(4,)", "(8,)", "")
    assert (rows[2][C.COUNT_A], rows[2][C.COUNT_B], rows[2][C.TIME_B_US]) == (1, 0, 0.0)


def test_timeline_rows_pair_devices_in_sorted_order():
    a = Side("a", [], [tl(0, "computation", 4.0, 80.0), tl(0, "idle", 1.0, 20.0)])
    b = Side("b", [], [tl(2, "computation", 2.0, 50.0), tl(2, "exposed comm", 2.0, 50.0)])
    rows = timeline_rows(a, b)
    assert [(r[C.DEVICE_A], r[C.DEVICE_B], r[C.TYPE], r[C.TIME_A_MS], r[C.TIME_B_MS], r[C.DELTA_MS]) for r in rows] == [
        ("0", "2", "computation", 4.0, 2.0, -2.0),
        ("0", "2", "idle", 1.0, None, None),
        ("0", "2", "exposed comm", None, 2.0, None),
    ]
    assert rows[0][C.SPEEDUP_A_PER_B] == 2.0 and rows[1][C.SPEEDUP_A_PER_B] is None


def test_build_diff_sheets_summary_per_rule():
    a = Side("a.json", [op("mm", 100.0), op("gone", 5.0)], kind="trace")
    b = Side("b.xlsx", [op("mm", 80.0), op("new", 1.0)], kind="workbook")
    sheets = {s.name: s for s in build_diff_sheets(a, b)}
    assert list(sheets) == ["diff_summary", "diff_context", "diff_ops", "diff_gpu_timeline"]
    assert sheets["diff_ops"].columns == OPS_COLS
    summ = {r[C.METRIC]: (r[C.A], r[C.B], r[C.ROWS]) for r in sheets["diff_summary"].records()}
    assert summ["GPU kernel time (µs)"] == (105.0, 81.0, 3)
    assert summ["rows matched by name+shapes+dtypes (µs)"] == (100.0, 80.0, 1)
    assert summ["vanished rows (µs)"] == (5.0, 0.0, 1)
    assert summ["appeared rows (µs)"] == (0.0, 1.0, 1)
    assert sheets["diff_summary"].notes[:2] == ["A: a.json (trace)", "B: b.xlsx (workbook)"]
    assert sheets["diff_gpu_timeline"].notes == ["a side has no gpu_timeline"]
