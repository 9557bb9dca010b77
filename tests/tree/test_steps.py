"""tree/steps.py: steps found by kind (ProfilerStep, iteration annotations, graph replays), tokens and
kind from the annotations, warm-up flags, ``--steps`` parsing, selection and restriction of the tree."""

from __future__ import annotations

import pytest

from perfreport.errors import BadInput
from perfreport.pipeline import load_tree
from perfreport.tree.steps import find_steps, parse_steps, restrict, select
from tests.kit import X, write_trace


def _kernel(name, ts, dur, corr):
    return X("kernel", name, ts, dur, pid=0, tid=7, device=0, stream=7, correlation=corr)


def _profiler_trace(tmp_path):
    # three ProfilerStep ranges: 100 µs, 30 µs, 40 µs (the first is > 2x the median of 30 and 40)
    ev = [
        X("user_annotation", "ProfilerStep#7", 0, 100),
        X("cpu_op", "aten::mm", 10, 20),
        X("cuda_runtime", "cudaLaunchKernel", 12, 2, correlation=1),
        X("user_annotation", "ProfilerStep#8", 200, 30),
        X("cpu_op", "aten::add", 205, 10),
        X("cuda_runtime", "cudaLaunchKernel", 206, 2, correlation=2),
        X("user_annotation", "ProfilerStep#9", 300, 40),
        X("cpu_op", "aten::mul", 310, 10),
        X("cuda_runtime", "cudaLaunchKernel", 311, 2, correlation=3),
        _kernel("mm_kernel", 50, 5, 1),
        _kernel("add_kernel", 250, 5, 2),
        _kernel("mul_kernel", 350, 5, 3),
        X("kernel", "unlinked_in_8", 220, 1, pid=0, tid=7, device=0, stream=7, correlation=99),
        X("kernel", "unlinked_outside", 500, 1, pid=0, tid=7, device=0, stream=7, correlation=98),
    ]
    return load_tree(write_trace(tmp_path, ev), passes=False)


def test_profiler_steps_keep_their_numbers_and_the_first_is_a_warmup(tmp_path):
    steps = find_steps(_profiler_trace(tmp_path))
    assert [(s.number, s.source, s.ts, s.end) for s in steps] == [
        (7, "ProfilerStep", 0, 100),
        (8, "ProfilerStep", 200, 230),
        (9, "ProfilerStep", 300, 340),
    ]
    # 100 / median(30, 40) = 100 / 35 = 2.857...; the second has only one later step, so no verdict
    assert steps[0].warmup == "likely warm-up: 2.9x the median of the later steps"
    assert steps[1].warmup == "" and steps[2].warmup == ""
    assert all(s.tokens is None and s.kind is None for s in steps)


def test_iteration_annotations_are_steps_with_tokens_and_kind(tmp_path):
    ev = [
        X("user_annotation", "execute_context_2(300)_generation_0(0)", 0, 50),
        X("user_annotation", "execute_context_0(0)_generation_30(30)", 100, 50),
        X("user_annotation", "execute_context_1(10)_generation_4(4)", 200, 50),
    ]
    steps = find_steps(load_tree(write_trace(tmp_path, ev), passes=False))
    assert [(s.number, s.source, s.ts) for s in steps] == [
        (0, "iteration annotation", 0),
        (1, "iteration annotation", 100),
        (2, "iteration annotation", 200),
    ]
    assert [(s.tokens, s.kind) for s in steps] == [(300, "prefill"), (30, "decode"), (14, "mixed")]


def test_graph_replays_are_steps_when_nothing_else_is(tmp_path):
    ev = [X("cuda_runtime", "cudaGraphLaunch", 40, 5), X("cuda_runtime", "cudaGraphLaunch", 10, 5)]
    steps = find_steps(load_tree(write_trace(tmp_path, ev), passes=False))
    assert [(s.number, s.source, s.ts) for s in steps] == [(0, "graph replay", 10), (1, "graph replay", 40)]
    assert find_steps(load_tree(write_trace(tmp_path, [X("cpu_op", "aten::mm", 0, 1)]), passes=False)) == []


@pytest.mark.parametrize(
    ("spec", "want"),
    [("3:5", (3, 5)), (" 3: ", (3, 1 << 62)), (":5", (-(1 << 62), 5)), ("1,4, 2", {1, 2, 4}), ("7", {7})],
)
def test_parse_steps(spec, want):
    assert parse_steps(spec) == want


@pytest.mark.parametrize("spec", ["5:3", "a", "", ",", "1:b"])
def test_parse_steps_refuses_other_forms(spec):
    with pytest.raises(BadInput, match="expected A:B, A:, :B or a list"):
        parse_steps(spec)


def test_select_by_range_list_and_refusals(tmp_path):
    steps = find_steps(_profiler_trace(tmp_path))
    assert [s.number for s in select(steps, "8:")] == [8, 9]
    assert [s.number for s in select(steps, "7,9")] == [7, 9]
    with pytest.raises(BadInput, match=r"'20:30' selects none of the trace's steps \(ProfilerStep 7..9\)"):
        select(steps, "20:30")
    with pytest.raises(BadInput, match="the trace has no steps"):
        select([], "1")


def test_restrict_keeps_the_chosen_steps_ops_and_gpu_events(tmp_path):
    tree = _profiler_trace(tmp_path)
    chosen = select(find_steps(tree), "8")
    note = restrict(tree, chosen)
    assert note == "steps: analysed 1 ProfilerStep step(s) (8) of the trace's steps, by --steps"
    assert sorted(o.name for o in tree.ops) == ["ProfilerStep#8", "aten::add"]
    assert sorted(g.name for g in tree.gpu) == ["add_kernel", "unlinked_in_8"]
    assert [r.name for r in tree.roots] == ["ProfilerStep#8"]
    assert tree.ops_named("aten::mm") == []
