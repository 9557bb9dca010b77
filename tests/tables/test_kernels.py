"""tables/kernels.py: kernel_summary (per parent op, kernel, stream; sum is stream time) and short_kernels;
the parents and the rows found per distinct value read as the event-by-event loops they replace."""

from __future__ import annotations

from pathlib import Path

import pytest

from perfreport.pipeline import load_tree
from perfreport.tables import columns as C
from perfreport.tables.kernels import gpu_parents, kernel_summary, parent_op, short_kernels
from perfreport.tables.ops import UNLINKED
from tests.kit import X, shape_args, write_trace


def _k(name, ts, dur, corr, stream=7):
    return X("kernel", name, ts, dur, pid=0, tid=stream, device=0, stream=stream, correlation=corr)


@pytest.fixture
def tree(tmp_path):
    ev = [
        X("cpu_op", "aten::mm", 0, 50, **shape_args([[4, 8], [8, 2]], ["float", "float"])),
        X("cuda_runtime", "cudaLaunchKernel", 5, 1, correlation=1),
        X("cuda_runtime", "cudaLaunchKernel", 10, 1, correlation=2),
        X("cuda_runtime", "cudaLaunchKernel", 20, 1, correlation=3),
        _k("gemm", 100, 20, 1),
        _k("gemm", 130, 40, 2),
        _k("gemm", 125, 4, 3, stream=9),
        _k("stray", 200, 6, 99),  # no launch call: unlinked
    ]
    return load_tree(write_trace(tmp_path, ev))


def test_kernel_summary_groups_by_parent_kernel_and_stream(tree):
    rows = kernel_summary(tree, total_time_us=200.0).records()
    got = [(r[C.PARENT_OP], r[C.KERNEL], r[C.STREAM], r[C.COUNT], r[C.SUM_US]) for r in rows]
    # largest sum first; kernel time = 20 + 40 + 4 + 6 = 70 µs
    assert got == [("aten::mm", "gemm", 7, 2, 60.0), (UNLINKED, "stray", 7, 1, 6.0), ("aten::mm", "gemm", 9, 1, 4.0)]
    first = rows[0]
    assert (first[C.MEAN_US], first[C.MEDIAN_US], first[C.MIN_US], first[C.MAX_US]) == (30.0, 30.0, 20.0, 40.0)
    assert first[C.PERCENT_OF_KERNEL_TIME_PCT] == pytest.approx(100 * 60 / 70)
    assert first[C.PERCENT_OF_GPU_TIMELINE_PCT] == pytest.approx(30.0)
    assert rows[1][C.PARENT_OP_CATEGORY] == "unlinked"
    assert kernel_summary(tree, 0.0).records()[0][C.PERCENT_OF_GPU_TIMELINE_PCT] == 0.0


def test_short_kernels_below_the_threshold_with_the_ops_inputs(tree):
    sheet = short_kernels(tree, total_time_us=200.0, threshold_us=10.0)
    assert sheet.notes == ["kernels shorter than 10 µs"]
    rows = sheet.records()
    assert [(r[C.PARENT_OP], r[C.KERNEL], r[C.COUNT], r[C.SUM_US]) for r in rows] == [
        (UNLINKED, "stray", 1, 6.0),
        ("aten::mm", "gemm", 1, 4.0),
    ]
    assert rows[1][C.INPUT_DIMS] == "(4, 8), (8, 2)"
    assert rows[0][C.INPUT_DIMS] == ""
    assert rows[0][C.PERCENT_OF_GPU_TIMELINE_PCT] == pytest.approx(3.0)
    assert short_kernels(tree, 200.0, threshold_us=1.0).rows == []


FIXTURES = ["serving_inductor", "sglang_tiny_graph", "torch_compile_triton", "vllm_decode_graph", "idle_launch_steps"]


def _fixture(name):
    return load_tree(str(Path(__file__).resolve().parents[2] / "fixtures" / f"{name}.json.gz"))


@pytest.mark.parametrize("name", FIXTURES)
def test_parents_read_as_parent_op_event_by_event(name):
    tree = _fixture(name)
    op_code, ops, code, table = gpu_parents(tree)
    assert [table[c] for c in code.tolist()] == [parent_op(g) for g in tree.gpu]
    assert table == list(dict.fromkeys(parent_op(g) for g in tree.gpu))  # numbered as first seen
    assert all(ops[c] is g.op for c, g in zip(op_code.tolist(), tree.gpu))


@pytest.mark.parametrize("name", FIXTURES)
def test_kernel_rows_group_as_the_event_loops(name):
    tree = _fixture(name)
    summary, short = {}, {}
    for g in tree.gpu:
        p = parent_op(g)
        summary.setdefault((p[0], g.name, g.stream), []).append(p[1])
        if g.dur < 10.0:
            key = (p[0], id(g.op.args) if g.op is not None else id(g), g.name)
            short[key] = short.get(key, 0) + 1
    rows = kernel_summary(tree, 1000.0).records()
    got = {(r[C.PARENT_OP], r[C.KERNEL], r[C.STREAM]): (r[C.PARENT_OP_CATEGORY], r[C.COUNT]) for r in rows}
    assert got == {k: (v[-1], len(v)) for k, v in summary.items()}  # the last event's category
    rows = short_kernels(tree, 1000.0, 10.0).records()
    assert sorted((r[C.PARENT_OP], r[C.KERNEL], r[C.COUNT]) for r in rows) == sorted(
        (p, k, n) for (p, _, k), n in short.items()
    )
