"""tables/gpu_arrays.py: one pass over the GPU events gives the flat arrays the idle, launch and
steps sheets share (start, end, launch call, device and stream codes, op name, owner start)."""

from __future__ import annotations

import math

from perfreport.pipeline import load_tree
from perfreport.tables.gpu_arrays import gpu_arrays
from tests.kit import X, write_trace


def _tree(tmp_path):
    ev = [
        X("cpu_op", "aten::mm", 0, 50),
        X("cuda_runtime", "cudaLaunchKernel", 10, 4, correlation=1),
        X("cuda_runtime", "cudaLaunchKernel", 60, 3, correlation=2),  # outside any op
        X("kernel", "gemm", 100, 20, pid=0, tid=7, device=0, stream=7, correlation=1),
        X("kernel", "copy", 130, 5, pid=0, tid=9, device=1, stream=9, correlation=2),
        X("kernel", "stray", 150, 1, pid=0, tid=7, device=0, stream=7, correlation=99),
    ]
    return load_tree(write_trace(tmp_path, ev))


def test_arrays_in_ts_order(tmp_path):
    a = gpu_arrays(_tree(tmp_path))
    assert len(a) == 3
    assert a.ts.tolist() == [100.0, 130.0, 150.0] and a.te.tolist() == [120.0, 135.0, 151.0]
    assert a.lts[:2].tolist() == [10.0, 60.0] and a.ldur[:2].tolist() == [4.0, 3.0] and math.isnan(a.lts[2])
    assert a.devices == [0, 1] and a.streams == [(0, 7), (1, 9)]
    assert [a.streams[s] for s in a.stream] == [(0, 7), (1, 9), (0, 7)]
    assert [a.op_names[o] for o in a.op] == ["aten::mm", "cudaLaunchKernel", "(unlinked)"]
    assert a.owner_ts[:2].tolist() == [0.0, 60.0] and a.linked.tolist() == [True, True, False]


def test_unlinked_events_can_be_left_out(tmp_path):
    a = gpu_arrays(_tree(tmp_path), include_unlinked=False)
    assert len(a) == 2 and "(unlinked)" not in a.op_names


def _records_copy(tree):
    """The tree's GPU events as records holding their own values (the one-by-one path)."""
    from perfreport.events import GpuEvent

    out = []
    for g in tree.gpu:
        c = GpuEvent(g.uid, g.name, g.cat, g.device, g.stream, g.ts, g.dur, g.correlation)
        c.launcher = g.launcher
        out.append(c)
    return out


def test_stream_codes_number_as_the_event_loop_does(tmp_path):
    from perfreport.tables.gpu_arrays import event_streams, stream_codes

    tree = _tree(tmp_path)
    dev, stream, devices, streams = stream_codes(tree.gpu)
    assert devices == [0, 1] and streams == [(0, 7), (1, 9)]
    assert dev.tolist() == [0, 1, 0] and stream.tolist() == [0, 1, 0]
    assert list(event_streams(tree.gpu)) == [7, 9, 7]
    copies = _records_copy(tree)
    assert stream_codes(copies) is None  # records of their own: read one by one
    assert list(event_streams(copies)) == [7, 9, 7]


def test_columns_path_matches_the_one_by_one_path(tmp_path):
    tree = _tree(tmp_path)
    fast = gpu_arrays(tree)
    tree.gpu = _records_copy(tree)
    slow = gpu_arrays(tree)
    for f in ("ts", "te", "dev", "stream", "op", "linked"):
        assert getattr(fast, f).tolist() == getattr(slow, f).tolist(), f
    assert fast.owner_ts[:2].tolist() == slow.owner_ts[:2].tolist()
    assert (fast.devices, fast.streams, fast.op_names) == (slow.devices, slow.streams, slow.op_names)
