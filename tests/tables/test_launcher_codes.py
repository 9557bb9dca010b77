"""tables/launcher_codes.py: the launcher codes read as the per-event loop they replace (each
event's launcher, numbered as first seen; per launcher its category and name), and the
unlinked events with their uids."""

from __future__ import annotations

from perfreport.pipeline import load_tree
from perfreport.tables.launcher_codes import launcher_table, unlinked
from perfreport.tables.op_times import shared
from tests.kit import X, write_trace


def _tree(tmp_path):
    ev = [
        X("cpu_op", "aten::mm", 0, 50),
        X("cuda_runtime", "cudaLaunchKernel", 10, 4, correlation=1),
        X("cuda_runtime", "cudaLaunchKernel", 20, 4, correlation=2),
        X("user_annotation", "step", 60, 40),
        X("cuda_runtime", "cudaLaunchKernel", 70, 3, correlation=3),
        X("kernel", "stray", 90, 1, pid=0, tid=7, device=0, stream=7, correlation=99),
        X("kernel", "gemm", 100, 20, pid=0, tid=7, device=0, stream=7, correlation=1),
        X("kernel", "gemm", 125, 5, pid=0, tid=7, device=0, stream=7, correlation=2),
        X("kernel", "copy", 130, 5, pid=0, tid=9, device=1, stream=9, correlation=3),
        X("kernel", "stray", 150, 1, pid=0, tid=7, device=0, stream=7, correlation=98),
    ]
    return load_tree(write_trace(tmp_path, ev))


def test_table_reads_as_the_event_loop(tmp_path):
    tree = _tree(tmp_path)
    t = launcher_table(tree.gpu)
    seen: dict = {}
    want = [seen.setdefault(id(g.launcher), len(seen)) for g in tree.gpu]
    assert t.code.tolist() == want
    assert [id(x) for x in t.launchers] == list(seen)
    assert t.launchers[t.none] is None and t.launchers.count(None) == 1
    for i, lr in enumerate(t.launchers):
        if lr is None:
            assert (t.cat[i], t.name[i]) == (-1, -1)
        else:
            assert (t.cats[t.cat[i]], t.names[t.name[i]]) == (lr.cat, lr.name)
    is_cpu = t.cat_is(("cpu_op",)).tolist()
    assert is_cpu == [lr is not None and lr.cat == "cpu_op" for lr in t.launchers]


def test_unlinked_events_and_their_uids(tmp_path):
    tree = _tree(tmp_path)
    want = [g for g in tree.gpu if g.launcher is None]
    assert [g.name for g in want] == ["stray", "stray"]
    assert unlinked(tree.gpu) == (want, None)  # nothing remembered: event by event, no uids
    with shared(tree.gpu):
        assert unlinked(tree.gpu) == (want, None)  # no launcher table yet: none made for it
        launcher_table(tree.gpu)
        a = unlinked(tree.gpu)
        assert unlinked(tree.gpu) is a and launcher_table(tree.gpu) is launcher_table(tree.gpu)  # made once
        un, uids = a
        assert un == want and uids[1].tolist() == [g.uid for g in want]


def test_every_event_linked(tmp_path):
    ev = [X("cpu_op", "aten::mm", 0, 50), X("cuda_runtime", "cudaLaunchKernel", 10, 4, correlation=1)]
    ev.append(X("kernel", "gemm", 100, 20, pid=0, tid=7, device=0, stream=7, correlation=1))
    tree = load_tree(write_trace(tmp_path, ev))
    t = launcher_table(tree.gpu)
    assert t.none == -1 and t.code.tolist() == [0]
    with shared(tree.gpu):
        launcher_table(tree.gpu)
        assert unlinked(tree.gpu) == ([], None)
