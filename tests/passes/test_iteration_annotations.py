"""passes/iteration_annotations.py: an op inherits the statistics of the annotation around it, the
innermost complete one first, on any thread."""

from __future__ import annotations

from types import SimpleNamespace

from perfreport.passes.iteration_annotations import EXTRA_OPS, containing, iteration_annotations
from perfreport.pipeline import load_tree
from tests.kit import X, write_trace

FULL = "execute_19_context_1(sq16sk24sqsq256sqsk384)_generation_3(sq3sk294sqsq3sqsk294)"
PA = next(iter(EXTRA_OPS))


def test_the_innermost_complete_annotation_wins_across_threads(tmp_path):
    ev = [
        X("user_annotation", FULL, 0, 100, tid=1),
        X("user_annotation", "step[DECODE bs=32]", 10, 50, tid=1),  # inside, but incomplete
        X("cpu_op", PA, 20, 5, tid=2),  # another thread, inside both
        X("cpu_op", PA, 150, 5, tid=2),  # outside every annotation
        X("user_annotation", "step[DECODE bs=8]", 200, 20, tid=1),
        X("cpu_op", PA, 205, 5, tid=2),  # only an incomplete one holds it
    ]
    t = load_tree(write_trace(tmp_path, ev))
    a, b, c = sorted(t.ops_named(PA), key=lambda o: o.ts)
    assert a.perf_meta["iteration"]["annotation"] == FULL
    assert "iteration" not in b.perf_meta
    assert c.perf_meta["iteration"]["annotation"] == "step[DECODE bs=8]"
    assert "missing" in c.perf_meta["iteration"]
    assert [o.name for o, _ in iteration_annotations(t)] == [FULL, "step[DECODE bs=32]", "step[DECODE bs=8]"]


def test_containing_needs_the_whole_op_inside():
    ann = SimpleNamespace(ts=0.0, dur=10.0)
    stats = {"format": "x"}
    inside = SimpleNamespace(ts=2.0, dur=8.0)  # ends exactly at the annotation's end
    across = SimpleNamespace(ts=5.0, dur=10.0)
    later = SimpleNamespace(ts=20.0, dur=1.0)
    got = list(containing([(ann, stats)], [later, across, inside]))
    assert got == [(inside, ann, stats)]
