"""tables/launches.py: launch time, delay (GPU start - launch start), clock skew, GPU work shorter
than its launch, and the per-stream queue depth, worked by hand."""

from __future__ import annotations

import numpy as np
import pytest

from perfreport.pipeline import load_tree
from perfreport.tables import columns as C
from perfreport.tables.gpu_arrays import gpu_arrays
from perfreport.tables.launches import call_index, launch_calls, launch_queue, launch_stats, queue_depth
from tests.kit import X, write_trace


def _arr(tmp_path):
    ev = [
        X("cpu_op", "aten::add", 0, 100),
        X("cuda_runtime", "cudaLaunchKernel", 10, 6, correlation=1),  # kernel 2 µs < 6 µs launch
        X("cuda_runtime", "cudaLaunchKernel", 20, 6, correlation=2),
        X("cpu_op", "aten::mm", 200, 100),
        X("cuda_runtime", "cudaLaunchKernel", 210, 2, correlation=3),
        X("kernel", "add_k", 30, 2, pid=0, tid=7, device=0, stream=7, correlation=1),  # delay 20
        X("kernel", "add_k", 60, 10, pid=0, tid=7, device=0, stream=7, correlation=2),  # delay 40
        X("kernel", "mm_k", 205, 50, pid=0, tid=7, device=0, stream=7, correlation=3),  # starts before its launch
    ]
    return gpu_arrays(load_tree(write_trace(tmp_path, ev)))


def test_launch_stats_rows(tmp_path):
    rows = launch_stats(_arr(tmp_path)).records()
    got = {r[C.OP]: r for r in rows}
    assert [r[C.OP] for r in rows] == ["(all launches)", "aten::add", "aten::mm"]  # ops by launch time
    add = got["aten::add"]
    assert (add[C.LAUNCH_CALLS], add[C.GPU_EVENTS], add[C.LAUNCH_TIME_SUM_US], add[C.LAUNCH_TIME_MEAN_US]) == (
        2,
        2,
        12.0,
        6.0,
    )
    assert (add[C.DELAY_MEDIAN_US], add[C.DELAY_MAX_US], add[C.GPU_WORK_SHORTER_THAN_LAUNCH], add[C.CLOCK_SKEW]) == (
        30.0,
        40.0,
        1,
        0,
    )
    mm = got["aten::mm"]
    assert (mm[C.DELAY_MEDIAN_US], mm[C.CLOCK_SKEW]) == (None, 1)  # -5 µs: skew, not a delay
    assert got["(all launches)"][C.LAUNCH_CALLS] == 3


def test_queue_depth_by_hand():
    # launches at 0, 1, 2; starts at 4, 5, 6: depth 1, 2, 3 then 2, 1, 0 over [0, 6]
    mx, mean, empty = queue_depth(np.array([0.0, 1.0, 2.0]), np.array([4.0, 5.0, 6.0]))
    assert (mx, mean, empty) == (3, pytest.approx((1 + 2 + 3 * 2 + 2 + 1) / 6), 0.0)
    # one event queued from 0 to 1, the next from 3 to 4: empty 2 of 4
    assert queue_depth(np.array([0.0, 3.0]), np.array([1.0, 4.0])) == (1, 0.5, 50.0)
    assert queue_depth(np.array([5.0]), np.array([1.0])) == (0, 0.0, 0.0)  # clock skew only


def test_launch_queue_per_stream(tmp_path):
    rows = launch_queue(_arr(tmp_path)).records()
    assert [(r[C.DEVICE], r[C.STREAM], r[C.LAUNCHES]) for r in rows] == [(0, 7, 3)]
    assert rows[0][C.QUEUED_MAX] == 2


def test_launch_calls_one_per_call_in_key_order(tmp_path):
    # three calls by (start, duration, op): 10/6 and 20/6 of aten::add, 210/2 of aten::mm
    a = _arr(tmp_path)
    inv, cts, cdur, cop = launch_calls(a)
    assert cts.tolist() == [10.0, 20.0, 210.0] and cdur.tolist() == [6.0, 6.0, 2.0]
    assert [a.op_names[c] for c in cop] == ["aten::add", "aten::add", "aten::mm"]
    assert inv.tolist() == [0, 1, 2]  # per event with a call, in event (GPU start) order
    assert launch_calls(a, inverse=False)[0] is None
    idx = call_index(a)[0]
    assert idx.tolist() == [0, 1, 2] and idx.dtype == np.int64


def test_queue_depth_ties_start_before_launch():
    # the second event is launched at 1.0, when the first starts: depth never exceeds 1
    assert queue_depth(np.array([0.0, 1.0]), np.array([1.0, 2.0])) == (1, 1.0, 0.0)
