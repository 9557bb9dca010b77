"""The C loop of the tree's nesting (perfreport/tree/_nest.c) against its Python loop
(tree.nest.nest_python, the reference): the same parent for every row on hand-made rows (ties,
zero-length launch calls, partial overlaps, thread changes, NaN), on random rows and on the
fixture traces. Skipped, saying why, when the extension is not built or PERFREPORT_PURE_PYTHON
turns it off."""

from __future__ import annotations

import importlib.util
import os

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from perfreport.read import read_trace
from perfreport.read.schema import C_CPU_OP, C_DRIVER, C_RUNTIME, C_USER_ANNOTATION
from perfreport.tree import nest
from tests.conftest import FIX

_BUILT = importlib.util.find_spec("perfreport.tree._nest") is not None
pytestmark = pytest.mark.skipif(
    not _BUILT or os.environ.get("PERFREPORT_PURE_PYTHON", "") not in ("", "0"),
    reason="the C loop perfreport.tree._nest is not built (no C compiler at install time: "
    "`pip install -e .` again with one) or PERFREPORT_PURE_PYTHON is set",
)


def _both(ts, dur, cat, thr):
    ts, dur = np.asarray(ts, dtype=np.float64), np.asarray(dur, dtype=np.float64)
    cat, thr = np.asarray(cat, dtype=np.int8), np.asarray(thr, dtype=np.int32)
    order = np.lexsort((-dur, ts, thr)).astype(np.int32)
    want = np.full(ts.size, -1, dtype=np.int32)
    nest.nest_python(order, ts, dur, cat, thr, want)
    got = np.full(ts.size, -1, dtype=np.int32)
    from perfreport.tree import _nest

    _nest.nest(order, ts, dur, cat, thr, got, C_RUNTIME, C_DRIVER)
    return got.tolist(), want.tolist()


def test_hand_made_rows():
    nan = float("nan")
    ts = [0, 0, 1, 2, 2, 5, 8, 9, 12, 0, 3, 3, 4, nan, 20]
    dur = [10, 10, 0, 3, 0, 6, 1, 1, 2, 5, 1, 0, 0, 1, nan]
    cat = [C_CPU_OP, C_CPU_OP, C_RUNTIME, C_CPU_OP, C_DRIVER, C_USER_ANNOTATION, C_RUNTIME, C_CPU_OP]
    cat += [C_CPU_OP, C_CPU_OP, C_RUNTIME, C_RUNTIME, C_CPU_OP, C_CPU_OP, C_CPU_OP]
    thr = [0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 0, 1]
    got, want = _both(ts, dur, cat, thr)
    assert got == want
    # a zero-length launch call is no parent: D nests in B, not in the call C before it
    assert _both(
        [0, 2, 3, 3.5, 12], [10, 3, 0, 0.5, 1], [C_CPU_OP, C_CPU_OP, C_RUNTIME, C_CPU_OP, C_CPU_OP], [0] * 5
    ) == (
        [-1, 0, 1, 1, -1],
        [-1, 0, 1, 1, -1],
    )


def test_no_rows():
    assert _both([], [], [], []) == ([], [])


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.integers(0, 40),
            st.integers(0, 12),
            st.sampled_from([C_CPU_OP, C_RUNTIME, C_DRIVER, C_USER_ANNOTATION]),
            st.integers(0, 2),
        ),
        max_size=60,
    )
)
def test_random_rows(rows):
    ts, dur, cat, thr = zip(*rows) if rows else ((), (), (), ())
    got, want = _both(ts, dur, cat, thr)
    assert got == want


def test_refuses_buffers_of_another_length():
    from perfreport.tree import _nest

    a = np.zeros(3, dtype=np.float64)
    with pytest.raises(ValueError, match="order"):
        _nest.nest(
            np.zeros(2, np.int32), a, a, np.zeros(3, np.int8), np.zeros(3, np.int32), np.zeros(3, np.int32), 1, 2
        )


@pytest.mark.parametrize("name", ["h100_qwen_0.5b.json.gz", "mi300_qwen_0.5b.json.gz", "serving_moe.json.gz"])
def test_fixture_traces(name):
    col = read_trace(str(FIX / name)).records
    c = col.c
    ts, dur = np.frombuffer(c.ts, np.float64), np.frombuffer(c.dur, np.float64)
    cat, thr = np.frombuffer(c.cat, np.int8), np.frombuffer(c.thr, np.int32)
    got, want = _both(ts, dur, cat, thr)
    assert got == want and max(want) >= 0
