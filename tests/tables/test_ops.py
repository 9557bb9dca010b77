"""tables/ops.py: ops_summary (direct and subtree kernel time, percent of all GPU time, the
unlinked row closing the sum), ops_summary_by_category, ops_unique_args, annotation categories."""

from __future__ import annotations

import pytest

from perfreport.pipeline import load_tree
from perfreport.tables import columns as C
from perfreport.tables.op_times import OpTimes
from perfreport.tables.ops import UNLINKED, kernels_summary_text, ops_summary, ops_summary_by_category, ops_unique_args
from tests.kit import X, shape_args, write_trace

MM_ARGS = shape_args([[4, 8], [8, 2]], ["float", "float"])


def _k(name, ts, dur, corr, **kw):
    return X("kernel", name, ts, dur, pid=0, tid=7, device=0, stream=7, correlation=corr, **kw)


@pytest.fixture
def tree(tmp_path):
    ev = [
        X("cpu_op", "aten::linear", 0, 100),
        X("cpu_op", "aten::mm", 10, 20, **MM_ARGS),
        X("cuda_runtime", "cudaLaunchKernel", 12, 2, correlation=1),
        X("cpu_op", "aten::mm", 40, 20, **MM_ARGS),  # same args: one unique-args row
        X("cuda_runtime", "cudaLaunchKernel", 42, 2, correlation=2),
        X("user_annotation", "CompiledFxGraph 3", 200, 50),
        X("cuda_runtime", "cudaLaunchKernel", 210, 2, correlation=3),
        _k("gemm", 300, 30, 1),
        _k("gemm", 340, 10, 2),
        _k("triton_poi_fused_add_0", 400, 8, 3),
        _k("stray", 500, 2, 99),
    ]
    t = load_tree(write_trace(tmp_path, ev))
    return t, OpTimes(t)


def test_ops_summary_closes_to_100_percent(tree):
    t, times = tree
    rows = {r[C.NAME]: r for r in ops_summary(t, times).records()}
    assert set(rows) == {"aten::mm", "aten::linear", "CompiledFxGraph 3", UNLINKED}
    mm = rows["aten::mm"]
    assert (mm[C.COUNT], mm[C.DIRECT_KERNEL_TIME_US], mm[C.CPU_TIME_US]) == (2, 40.0, 40.0)
    assert mm[C.PERCENT_PCT] == pytest.approx(100 * 40 / 50)  # GPU time 30 + 10 + 8 + 2 = 50
    assert (rows["aten::linear"][C.DIRECT_KERNEL_TIME_US], rows["aten::linear"][C.SUBTREE_KERNEL_TIME_US]) == (
        0.0,
        40.0,
    )
    assert rows["CompiledFxGraph 3"][C.CATEGORY] == "compiled"  # an annotation: what its kernels are
    assert (rows[UNLINKED][C.CATEGORY], rows[UNLINKED][C.DIRECT_KERNEL_TIME_US]) == ("unlinked", 2.0)
    assert max(r[C.CUMULATIVE_PERCENT_PCT] for r in rows.values()) == pytest.approx(100.0)


def test_by_category_adds_the_rows(tree):
    t, times = tree
    rows = {r[C.CATEGORY]: r for r in ops_summary_by_category(ops_summary(t, times), t).records()}
    assert rows["GEMM"][C.DIRECT_KERNEL_TIME_US] == 40.0
    assert rows["compiled"][C.DIRECT_KERNEL_TIME_US] == 8.0 and rows["unlinked"][C.COUNT] == 1


def test_unique_args_groups_equal_arguments(tree):
    t, times = tree
    mm = [r for r in ops_unique_args(t, times).records() if r[C.NAME] == "aten::mm"]
    assert len(mm) == 1
    (r,) = mm
    assert (r[C.COUNT], r[C.INPUT_DIMS], r[C.INPUT_TYPES]) == (2, "(4, 8), (8, 2)", "float, float")
    assert (r[C.DIRECT_KERNEL_TIME_MEAN_US], r[C.DIRECT_KERNEL_TIME_MIN_US], r[C.DIRECT_KERNEL_TIME_MAX_US]) == (
        20.0,
        10.0,
        30.0,
    )
    assert r[C.DIRECT_KERNEL_TIME_STD_US] == pytest.approx(14.142135623730951)  # sample std of 30, 10
    assert r[C.KERNELS] == "gemm [stream 7] x2, mean 20.000 µs"
    assert r[C.EXAMPLE_TS_US] == 10.0


def test_kernels_summary_text_counts_per_name_and_stream(tree):
    t, _ = tree
    ks = sorted(t.gpu, key=lambda g: g.ts)
    assert kernels_summary_text([ks[:1], ks[1:2]]) == "gemm [stream 7] x2, mean 20.000 µs"


def _summary_loop(tree, times):
    """The op-by-op sums ops_summary replaces: per name, count, Σ direct / subtree / CPU time in
    tree order, the first op's category (a later one's where it has none)."""
    from perfreport.tables.ops import category, op_rows

    agg: dict = {}
    for o in op_rows(tree, times):
        a = agg.setdefault(o.name, [0, 0.0, 0.0, 0.0, ""])
        a[0] += 1
        a[1] += float(times.direct[o.uid])
        a[2] += float(times.subtree[o.uid])
        a[3] += o.dur
        a[4] = a[4] or category(o)
    return {k: (v[4], v[0], v[1], v[2], v[3]) for k, v in agg.items()}


def _unique_loop(tree, times):
    """The op-by-op grouping ops_unique_args replaces: (name, args dict or none), first seen."""
    from perfreport.tables.ops import op_rows

    groups: dict = {}
    for o in op_rows(tree, times):
        groups.setdefault((o.name, id(a) if (a := o.args) else 0), []).append(o)
    return groups


@pytest.mark.parametrize("name", ["serving_inductor", "cpu_block", "sglang_tiny_graph", "torch_compile_triton"])
def test_op_sheets_read_as_the_op_by_op_loops(name):
    from pathlib import Path

    tree = load_tree(str(Path(__file__).resolve().parents[2] / "fixtures" / f"{name}.json.gz"))
    times = OpTimes(tree)
    want = _summary_loop(tree, times)
    got = {
        r[C.NAME]: (
            r[C.CATEGORY],
            r[C.COUNT],
            r[C.DIRECT_KERNEL_TIME_US],
            r[C.SUBTREE_KERNEL_TIME_US],
            r[C.CPU_TIME_US],
        )
        for r in ops_summary(tree, times).records()
        if r[C.NAME] != UNLINKED
    }
    assert got == want and list(got) == [k for k in sorted(want, key=lambda k: -want[k][2 if tree.gpu else 4])]
    groups = _unique_loop(tree, times)
    rows = ops_unique_args(tree, times).records()
    assert sorted((r[C.NAME], r[C.COUNT], r[C.EXAMPLE_TS_US]) for r in rows) == sorted(
        (name, len(ops), ops[0].ts) for (name, _), ops in groups.items()
    )
