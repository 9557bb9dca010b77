"""tree/dedup.py: an event recorded twice is counted once; equal on every identity field, or kept."""

from __future__ import annotations

import numpy as np

from perfreport.pipeline import load_tree
from perfreport.tree.dedup import duplicate_rows, duplicates_warning
from tests.kit import X, write_trace


def test_a_trace_written_twice_reads_as_once(tmp_path):
    ev = [
        X("cpu_op", "aten::mm", 0, 10, **{"External id": 1}),
        X("cuda_runtime", "cudaLaunchKernel", 2, 1, correlation=1),
        X("kernel", "gemm", 20, 5, pid=0, tid=7, device=0, stream=7, correlation=1),
    ]
    once = load_tree(write_trace(tmp_path, ev, name="once.json"), passes=False)
    twice = load_tree(write_trace(tmp_path, ev + ev, name="twice.json"), passes=False)
    assert [o.name for o in twice.ops] == [o.name for o in once.ops] == ["aten::mm"]
    assert [g.name for g in twice.gpu] == ["gemm"]
    (w,) = [w for w in twice.warnings if "duplicate" in w]
    # 2 CPU rows (the op and the launch) and 1 GPU row of 6 read: 50% repeats
    assert w.startswith("3 duplicate events dropped (2 CPU, 1 GPU")
    assert w.endswith("; 50% of the events are repeats: the trace looks merged or written twice")
    assert not [w for w in once.warnings if "duplicate" in w]


def test_zero_length_ops_that_differ_in_external_id_are_kept(tmp_path):
    ev = [X("cpu_op", "aten::view", 5, 0, **{"External id": i}) for i in (1, 2, 3)]
    t = load_tree(write_trace(tmp_path, ev), passes=False)
    assert len(t.ops_named("aten::view")) == 3


def test_duplicate_rows_never_marks_the_unique_rows():
    ts = np.array([1.0, 1.0, 1.0, 2.0])
    ids = np.array([5, 5, 5, 5])
    assert duplicate_rows([ts, ids]).tolist() == [False, True, True, False]
    assert duplicate_rows([ts, ids], np.array([False, True, False, False])).tolist() == [False, False, True, False]
    assert duplicate_rows([np.array([3.0])]).tolist() == [False]


def test_warning_says_repeats_from_a_quarter():
    assert duplicates_warning(0, 0, 0) is None
    assert "repeats" not in duplicates_warning(24, 0, 100)
    assert duplicates_warning(20, 5, 100).endswith(
        "; 25% of the events are repeats: the trace looks merged or written twice"
    )
