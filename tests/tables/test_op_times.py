"""tables/op_times.py: direct and subtree kernel time per CPU event (stream time: same-stream
overlap counted once), worked by hand."""

from __future__ import annotations

import pytest

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


def test_uids_across_chunks_and_mixed_records(tmp_path, monkeypatch):
    from perfreport.events import GpuEvent
    from perfreport.tables import op_times

    ev = [X("cpu_op", "aten::mm", 0, 50), X("cuda_runtime", "cudaLaunchKernel", 10, 4, correlation=1)]
    ev += [_k(n, 100 + 10 * i, 5, 1 if i == 0 else 50 + i) for i, n in enumerate("abcde")]
    tree = load_tree(write_trace(tmp_path, ev))
    want = [g.uid for g in tree.gpu]
    for chunk in (1, 2, 3, 100):
        monkeypatch.setattr(op_times, "CHUNK", chunk)
        src, uid = op_times._uids(tree.gpu)
        assert src is tree.gpu[0]._src and uid.tolist() == want
        g = tree.gpu[-1]
        own = GpuEvent(g.uid, g.name, g.cat, g.device, g.stream, g.ts, g.dur, g.correlation)
        assert op_times._uids(tree.gpu[:-1] + [own]) == (None, None)  # one holds its own values


def test_remembered_once_while_shared_and_not_after_forget(tmp_path):
    from perfreport.tables.op_times import forget_uids, remembered, shared

    tree = load_tree(write_trace(tmp_path, [X("cpu_op", "aten::mm", 0, 50), _k("a", 100, 20, 1)]))
    made = []
    make = lambda: made.append(1) or len(made)  # noqa: E731
    assert remembered(tree.gpu, "k", make) == 1 and remembered(tree.gpu, "k", make) == 2  # not shared
    with shared(tree.gpu):
        assert remembered(tree.gpu, "k", make) == 3 and remembered(tree.gpu, "k", make) == 3
        with shared(tree.gpu):  # (a nested open keeps the outer one's)
            assert remembered(tree.gpu, "k", make) == 3
        assert remembered(tree.gpu, "k", make) == 3
        forget_uids(tree.gpu)
        assert remembered(tree.gpu, "k", make) == 4 and remembered(tree.gpu, "k", make) == 5


@pytest.mark.parametrize("name", ["h100_qwen_0.5b.json.gz", "idle_launch_steps.json.gz", "vllm_decode_graph.json.gz"])
def test_level_sums_are_the_walk_bit_for_bit(name):
    """OpTimes' subtree sums level by level equal the recursive op walk's, bit for bit; its kernel
    arrays list every op's kernels in tree.ops order."""
    import numpy as np

    from perfreport.tables.op_times import _subtree_walk
    from tests.conftest import FIX

    tree = load_tree(str(FIX / name))
    t = OpTimes(tree)
    walk = _subtree_walk(tree, len(t.direct), t.direct)
    assert np.array_equal(t.subtree.view(np.int64), walk.view(np.int64))
    ks = [(g.uid, o.uid) for o in tree.ops for g in (o.kernels or ())]
    assert list(zip(t.kernel_uid.tolist(), t.kernel_owner.tolist())) == ks
    assert t.owning.tolist() == [owns(o) for o in tree.ops]
    assert t.has_kernels.tolist() == [bool(o.kernels) for o in tree.ops]


def test_forget_keeps_what_it_is_asked_to_and_release_drops_it(tmp_path):
    from perfreport.tables.op_times import forget_uids, release, remembered, shared

    tree = load_tree(write_trace(tmp_path, [X("cpu_op", "aten::mm", 0, 50), _k("a", 100, 20, 1)]))
    with shared(tree.gpu):
        a, b = remembered(tree.gpu, "a", lambda: ["a"]), remembered(tree.gpu, "b", lambda: ["b"])
        forget_uids(tree.gpu, keep=("a",))
        assert remembered(tree.gpu, "a", lambda: None) is a  # kept over the forget
        assert remembered(tree.gpu, "b", lambda: ["new"]) is not b  # dropped
        release(tree.gpu, "a")
        assert remembered(tree.gpu, "a", lambda: "afresh") == "afresh"
