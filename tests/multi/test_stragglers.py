"""multi/stragglers.py: per step, the rank that reached the collectives last and the time the others waited."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from perfreport.multi.stragglers import NO_STEP, stragglers_by_step
from perfreport.tables import columns as C
from perfreport.tables.sheet import Sheet

COLS = [C.PROCESS_GROUP, C.SEQ, C.STRAGGLER_RANK, C.START_SKEW_US]


def _rank(steps, calls):
    return SimpleNamespace(steps=steps, calls=calls)


def _sheet(rows):
    return Sheet.from_records("collectives", [dict(zip(COLS, r)) for r in rows], COLS)


def test_no_steps_no_sheet():
    ranked = [(0, "a", _rank([], [])), (1, "b", _rank([], []))]
    assert stragglers_by_step(ranked, _sheet([])) is None


def test_calls_fall_in_the_straggler_ranks_step():
    steps = [(0, 0.0, 100.0), (1, 100.0, 200.0)]
    calls = [
        {"pg": "0", "seq": 1, "cpu_ts": 10.0},
        {"pg": "0", "seq": 2, "cpu_ts": 50.0},
        {"pg": "0", "seq": 3, "cpu_ts": 150.0},
        {"pg": "0", "seq": 4, "cpu_ts": 250.0},  # after every step
    ]
    ranked = [(0, "r0", _rank(steps, calls)), (1, "r1", _rank(steps, calls))]
    sheet = _sheet(
        [
            ("0", 1, 1, 30.0),  # step 0: rank 1 last, 30 µs
            ("0", 2, 0, 40.0),  # step 0: rank 0 last, 40 µs (a tie on times last: larger skew wins)
            ("0", 3, 1, 5.0),  # step 1
            ("0", 4, 0, 2.0),  # no step
            ("0", 5, None, 9.0),  # no straggler: left out
        ]
    )
    rows = stragglers_by_step(ranked, sheet).records()
    got = [
        (
            r[C.STEP],
            r[C.COLLECTIVE_CALLS],
            r[C.STRAGGLER_RANK],
            r[C.TIMES_LAST],
            r[C.SKEW_SUM_US],
            r[C.SKEW_MAX_US],
            r[C.STRAGGLER_SKEW_US],
        )
        for r in rows
    ]
    assert got == [
        (0, 2, 0, 1, 70.0, 40.0, 40.0),
        (1, 1, 1, 1, 5.0, 5.0, 5.0),
        (NO_STEP, 1, 0, 1, 2.0, 2.0, 2.0),
    ]


def test_calls_without_seq_are_matched_by_position():
    steps = [(7, 0.0, 100.0)]
    calls = [{"pg": "g", "seq": None, "cpu_ts": 20.0}, {"pg": "g", "seq": None, "cpu_ts": 10.0}]
    ranked = [(0, "r0", _rank(steps, calls))]
    rows = stragglers_by_step(ranked, _sheet([("g", 1, 0, 3.0), ("g", 2, 0, 4.0)])).records()
    assert [(r[C.STEP], r[C.TIMES_LAST], r[C.SKEW_SUM_US]) for r in rows] == [(7, 2, pytest.approx(7.0))]
