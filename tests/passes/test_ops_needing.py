"""passes.ops_needing: the cpu_ops whose model declares a key (or named in ``extra``), in the ops' order."""

from __future__ import annotations

from perfreport.events import Op
from perfreport.passes import ops_needing
from perfreport.tree.trace_tree import TraceTree


def _tree(rows):
    ops = [Op(u, name, cat, 1, 1, float(ts), 1.0) for u, (name, cat, ts) in enumerate(rows)]
    return TraceTree("t", {}, ops, [], [], list(ops))


ROWS = [
    ("aten::stack", "cpu_op", 5),
    ("aten::cat", "cpu_op", 1),  # before the stack in time, after it in the list: list order kept
    ("aten::cat", "user_annotation", 2),  # not a cpu_op
    ("aten::mm", "cpu_op", 3),
    ("aten::cat", "cpu_op", 4),
]


def test_no_op_wants_the_key_gives_nothing():
    assert ops_needing(_tree(ROWS), "no_such_key") == []


def test_one_name_wanted_comes_from_the_index_in_the_ops_order():
    t = _tree(ROWS[1:])
    assert [(o.name, o.ts) for o in ops_needing(t, "element_bytes")] == [("aten::cat", 1.0), ("aten::cat", 4.0)]


def test_several_names_wanted_keep_the_ops_order_and_extra_names_count():
    t = _tree(ROWS)
    got = [(o.name, o.ts) for o in ops_needing(t, "element_bytes")]
    assert got == [("aten::stack", 5.0), ("aten::cat", 1.0), ("aten::cat", 4.0)]
    got = [(o.name, o.ts) for o in ops_needing(t, "no_such_key", frozenset({"aten::mm", "aten::cat"}))]
    assert got == [("aten::cat", 1.0), ("aten::mm", 3.0), ("aten::cat", 4.0)]


def test_run_passes_looks_each_name_up_once_and_forgets_after(monkeypatch):
    import perfreport.models.registry as R
    import perfreport.passes as PS

    calls = []
    real = R.model_for
    monkeypatch.setattr(R, "model_for", lambda n: calls.append(n) or real(n))
    got = []
    passes = [PS.Pass(f"p{i}", (), lambda t: got.append(len(ops_needing(t, "element_bytes"))), i) for i in range(3)]
    monkeypatch.setattr(PS, "PASSES", passes)
    monkeypatch.setattr(PS, "_loaded", True)
    t = _tree(ROWS)
    PS.run_passes(t)
    assert got == [3, 3, 3] and sorted(calls) == ["aten::cat", "aten::mm", "aten::stack"]  # cpu_op names, once
    assert PS._NEEDS == []
    ops_needing(t, "element_bytes")  # outside run_passes: looked up afresh
    assert len(calls) == 6


def test_the_passes_drop_the_by_name_index_they_built():
    from perfreport.passes import run_passes

    t = _tree(ROWS)
    assert t.ops_named("aten::cat") and t._by_name is not None
    run_passes(t)
    assert t._by_name is None  # freed for the tables' peak
    assert [o.ts for o in t.ops_named("aten::cat")] == [1.0, 2.0, 4.0]  # rebuilt when asked (any category)
