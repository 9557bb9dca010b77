"""TraceTree's name index (perfreport.tree.trace_tree)."""

from __future__ import annotations

from perfreport.pipeline import load_tree
from tests.tree.test_build import X, _write


def test_invalidate_index_rebuilds_the_name_index(tmp_path):
    t = load_tree(_write(tmp_path, [X("cpu_op", "a", 0, 10), X("cpu_op", "b", 20, 10)]))
    assert [o.name for o in t.ops_named("a")] == ["a"]  # the index is built here
    a = t.ops_named("a")[0]
    t.ops.append(a)  # a change in place the index does not see
    assert len(t.ops_named("a")) == 1
    t.invalidate_index()
    assert len(t.ops_named("a")) == 2 and t.has_op("b")


def test_release_collects_the_cycles_of_a_big_tree_only(tmp_path, monkeypatch):
    import gc

    from perfreport.tree import trace_tree

    calls = []
    monkeypatch.setattr(gc, "collect", lambda *a: calls.append(a) or 0)
    t = load_tree(_write(tmp_path, [X("cpu_op", "a", 0, 10), X("cpu_op", "b", 20, 10)]))
    t.release()
    assert calls == [] and t.ops == [] and t.gpu == []  # 2 ops: left to the automatic collector
    monkeypatch.setattr(trace_tree, "COLLECT_FROM", 2)
    t = load_tree(_write(tmp_path, [X("cpu_op", "a", 0, 10), X("cpu_op", "b", 20, 10)]))
    t.release()
    assert calls == [()] and t.ops == [] and t.roots == []
