"""tables/op_times.py: direct and subtree kernel time per CPU event (stream time: same-stream
overlap counted once), worked by hand."""

from __future__ import annotations

from perfreport.pipeline import load_tree
from perfreport.tables.op_times import OpTimes, gpu_time, kernel_time, owns
from tests.kit import X, write_trace


def _k(name, ts, dur, corr):
    return X("kernel", name, ts, dur, pid=0, tid=7, device=0, stream=7, correlation=corr)


def test_direct_and_subtree_times(tmp_path):
    ev = [
        X("cpu_op", "outer", 0, 100),
        X("cpu_op", "inner", 10, 30),
        X("cuda_runtime", "cudaLaunchKernel", 15, 2, correlation=1),
        X("cuda_runtime", "cudaLaunchKernel", 20, 2, correlation=2),
        X("cuda_runtime", "cudaLaunchKernel", 60, 2, correlation=3),  # outer's own launch
        X("cuda_runtime", "cudaLaunchKernel", 200, 2, correlation=4),  # outside any op
        _k("a", 300, 10, 1),
        _k("b", 305, 10, 2),  # overlaps a by 5 µs on the stream: 5 µs of its own
        _k("c", 400, 4, 3),
        _k("d", 500, 1, 4),
    ]
    t = load_tree(write_trace(tmp_path, ev))
    times = OpTimes(t)
    (outer,) = t.ops_named("outer")
    (inner,) = t.ops_named("inner")
    assert (times.direct[inner.uid], times.subtree[inner.uid]) == (15.0, 15.0)
    assert (times.direct[outer.uid], times.subtree[outer.uid]) == (4.0, 19.0)
    assert gpu_time(t) == 10 + 5 + 4 + 1
    assert kernel_time([]) == 0.0 and kernel_time(None) == 0.0
    assert all(owns(o) for o in (outer, inner))


def test_shared_gathers_once_and_forgets(tmp_path, monkeypatch):
    from perfreport.tables import op_times
    from perfreport.tables.op_times import event_columns, forget_uids, shared, shared_uids

    ev = [X("cpu_op", "aten::mm", 0, 50), X("cuda_runtime", "cudaLaunchKernel", 10, 4, correlation=1)]
    ev += [_k("a", 100, 20, 1), _k("b", 110, 20, 2)]
    tree = load_tree(write_trace(tmp_path, ev))
    want = gpu_time(tree)
    calls = []
    real = op_times._uids
    monkeypatch.setattr(op_times, "_uids", lambda e: calls.append(1) or real(e))
    with shared(tree.gpu):
        assert len(calls) == 1
        assert gpu_time(tree) == want and gpu_time(tree) == want
        (d,) = event_columns(tree.gpu, {"dur": "dur"})
        assert d.tolist() == [g.dur for g in tree.gpu] and len(calls) == 1  # the shared uids
        forget_uids(tree.gpu)
        assert shared_uids(tree.gpu)[1] is not None and len(calls) == 2  # gathered afresh
        assert gpu_time(tree) == want  # the Σ is kept
    assert shared_uids(tree.gpu)[1] is not None and len(calls) == 3  # closed: nothing kept
