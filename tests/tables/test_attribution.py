"""Attribution of kernel time to rows, each on a trace fragment with hand-worked values:
kernels inside user annotations categorised by what they are, an op nested in an op of the
same name counted once, same-stream overlap counted once, a GEMM backward's bias gradient
counted once, LayerNorm forward bytes with its saved mean/rstd."""

from __future__ import annotations

import io
import json

import pytest

from perfreport.pipeline import load_tree
from perfreport.tables import build_sheets
from tests.kit import X

BF16 = "c10::BFloat16"


def K(name, ts, dur, corr, stream=7, cat="kernel"):
    return {
        "ph": "X",
        "cat": cat,
        "name": name,
        "pid": 0,
        "tid": stream,
        "ts": ts,
        "dur": dur,
        "args": {"device": 0, "stream": stream, "correlation": corr},
    }


def _run(events):
    tree = load_tree(io.BytesIO(json.dumps({"traceEvents": events}).encode()))
    return tree, {s.name: s for s in build_sheets(tree)}


def _rows(sheet, *keys):
    return {tuple(r[k] for k in keys): r for r in sheet.records()}


def test_annotation_kernels_are_categorised_by_what_they_are():
    ann = "## Call CompiledFxGraph fabc123 ##"
    tree, sh = _run(
        [
            X("user_annotation", "nccl:all_reduce", 0, 100),
            X("cuda_runtime", "cudaLaunchKernel", 10, 5, correlation=1),
            X("user_annotation", ann, 200, 100),
            X("cuda_driver", "cuLaunchKernel", 210, 5, correlation=2),
            X("cuda_driver", "cuLaunchKernel", 220, 5, correlation=3),
            X("cuda_driver", "cuLaunchKernel", 230, 5, correlation=4),
            X("cuda_runtime", "cudaMemcpyAsync", 240, 5, correlation=5),
            K("ncclDevKernel_AllReduce_Sum_f32_RING_LL", 1000, 47, 1, stream=20),
            K("triton_poi_fused_add_0", 1100, 5, 2),
            K("triton_red_fused_sum_1", 1110, 7, 3),
            K("triton_red_fused_sum_1", 1120, 7, 4),
            K("Memcpy DtoD (Device -> Device)", 1130, 3, 5, cat="gpu_memcpy"),
        ]
    )
    u = _rows(sh["unified_perf_summary"], "name", "category")
    # all-reduce: communication, 47 µs; compiled-graph kernels: one row per kernel name;
    # the copy: memcpy. 47 + 5 + 2·7 + 3 = 69 µs
    assert {k: (r["count"], r["time sum (µs)"]) for k, r in u.items()} == {
        ("nccl:all_reduce", "comm"): (1, 47),
        ("triton_poi_fused_add_0", "compiled"): (1, 5),
        ("triton_red_fused_sum_1", "compiled"): (2, 14),
        (ann, "memcpy"): (1, 3),
    }
    ops = _rows(sh["ops_summary"], "name")
    assert ops[("nccl:all_reduce",)]["category"] == "comm"
    assert ops[(ann,)]["category"] == "compiled"  # 19 µs of Triton kernels vs 3 µs copy
    by_cat = {r["category"]: r["direct kernel time (µs)"] for r in sh["ops_summary_by_category"].records()}
    assert by_cat == {"comm": 47, "compiled": 22}
    ks = {r["kernel"]: r["parent op category"] for r in sh["kernel_summary"].records()}
    assert ks["ncclDevKernel_AllReduce_Sum_f32_RING_LL"] == "comm"
    assert ks["Memcpy DtoD (Device -> Device)"] == "memcpy"
    assert ks["triton_poi_fused_add_0"] == "compiled"
    for s in sh.values():
        if "category" in s.columns:
            assert "user_annotation" not in {r["category"] for r in s.records()}, s.name


def test_op_nested_in_op_of_the_same_name_is_one_call():
    d = {
        "Input Dims": [[4], []],
        "Input type": ["float", "Scalar"],
        "Input Strides": [[1], []],
        "Concrete Inputs": ["", "2"],
    }
    tree, sh = _run(
        [
            X("cpu_op", "aten::div", 0, 100, **d),  # div(Tensor, Scalar) ...
            X(
                "cpu_op",
                "aten::div",
                10,
                80,  # ... calls div(Tensor, Tensor)
                **{"Input Dims": [[4], []], "Input type": ["float", "float"]},
            ),
            X("cuda_runtime", "cudaLaunchKernel", 20, 5, correlation=1),
            X("cpu_op", "aten::div", 200, 50, **d),
            X("cuda_runtime", "cudaLaunchKernel", 210, 5, correlation=2),
            K("div_kernel", 1000, 10, 1),
            K("div_kernel", 1020, 6, 2),
        ]
    )
    assert len(tree.ops_named("aten::div")) == 2
    r = _rows(sh["ops_summary"], "name")[("aten::div",)]
    # two calls, not three; direct 10 + 6 = 16; subtree 16 (not 10 + 10 + 6 = 26);
    # CPU time 100 + 50 = 150 (not 230)
    assert (r["count"], r["direct kernel time (µs)"], r["subtree kernel time (µs)"], r["CPU time (µs)"]) == (
        2,
        16,
        16,
        150,
    )
    u = [x for x in sh["unified_perf_summary"].records() if x["name"] == "aten::div"]
    assert sum(x["count"] for x in u) == 2 and sum(x["time sum (µs)"] for x in u) == 16
    assert sum(x["count"] for x in sh["ops_unique_args"].records() if x["name"] == "aten::div") == 2


def test_kernels_overlapping_on_one_stream_are_unioned():
    tree, sh = _run(
        [
            X("cpu_op", "aten::mm", 0, 100),
            X("cuda_runtime", "cudaLaunchKernel", 10, 5, correlation=1),
            X("cuda_runtime", "cudaLaunchKernel", 20, 5, correlation=2),
            X("cpu_op", "aten::add", 200, 50),
            X("cuda_runtime", "cudaLaunchKernel", 210, 5, correlation=3),
            X("cpu_op", "aten::mul", 300, 50),
            X("cuda_runtime", "cudaLaunchKernel", 310, 5, correlation=4),
            K("k1", 1000, 30, 1),  # stream 7: [1000, 1030)
            K("k2", 1020, 30, 2),  # [1020, 1050): starts 10 µs early (PDL)
            K("k3", 1045, 10, 3),  # [1045, 1055): 5 µs under k2
            K("k4", 1000, 30, 4, stream=8),  # another stream: no overlap to remove
        ]
    )
    ops = {r["name"]: r["direct kernel time (µs)"] for r in sh["ops_summary"].records()}
    # mm: its kernels' wall span 1050 - 1000 = 50 (not 30 + 30 = 60); add: 1055 - 1050 = 5;
    # mul: 30. Σ 85 = union on stream 7 (55) + stream 8 (30)
    assert ops == {"aten::mm": 50, "aten::add": 5, "aten::mul": 30}
    assert sum(r["time sum (µs)"] for r in sh["unified_perf_summary"].records()) == 85
    ks = {r["kernel"]: r for r in sh["kernel_summary"].records()}
    assert (ks["k2"]["sum (µs)"], ks["k2"]["mean (µs)"]) == (20, 30)  # own duration kept
    assert ks["k3"]["sum (µs)"] == 5


def test_gemm_backward_bias_gradient_is_counted_once():
    fwd = {
        "Input Dims": [[256], [64, 128], [128, 256], [], []],
        "Input type": ["float"] * 3 + ["Scalar"] * 2,
        "Input Strides": [[1], [128, 1], [1, 128], [], []],
        "Concrete Inputs": ["", "", "", "1", "1"],
        "Sequence number": 7,
    }
    tree, sh = _run(
        [
            X("cpu_op", "aten::addmm", 0, 50, **fwd),
            X("cuda_runtime", "cudaLaunchKernel", 10, 5, correlation=1),
            X("cpu_op", "autograd::engine::evaluate_function: AddmmBackward0", 100, 100, tid=2),
            X("cpu_op", "AddmmBackward0", 105, 60, tid=2, **{"Sequence number": 7}),
            X("cpu_op", "aten::mm", 110, 20, tid=2),
            X("cuda_runtime", "cudaLaunchKernel", 115, 5, tid=2, correlation=2),
            X("cpu_op", "aten::mm", 135, 20, tid=2),
            X("cuda_runtime", "cudaLaunchKernel", 140, 5, tid=2, correlation=3),
            X(
                "cpu_op",
                "aten::sum",
                170,
                20,
                tid=2,  # bias grad: Σ over M of dC
                **{
                    "Input Dims": [[64, 256], [], [], []],
                    "Input type": ["float", "ScalarList", "Scalar", ""],
                    "Input Strides": [[256, 1], [], [], []],
                    "Concrete Inputs": ["", "[0]", "True", ""],
                },
            ),
            X("cuda_runtime", "cudaLaunchKernel", 175, 5, tid=2, correlation=4),
            K("gemm_fwd", 1000, 20, 1),
            K("gemm_dA", 1100, 15, 2),
            K("gemm_dB", 1120, 15, 3),
            K("reduce_bias", 1140, 4, 4),
        ]
    )
    u = _rows(sh["unified_perf_summary"], "name")
    bwd = u[("AddmmBackward0",)]
    # dA + dB only: 4·64·256·128 = 8,388,608 FLOP; 4 B·(2·64·256 + 2·64·128 + 2·128·256) =
    # 458,752 B; the bias gradient (64·256 adds) is the aten::sum row's, with its 4 µs kernel
    assert bwd["category"] == "GEMM_bwd" and bwd["time sum (µs)"] == 30
    assert bwd["GFLOP"] == pytest.approx(8_388_608e-9, rel=1e-12)
    assert bwd["data moved (MB)"] == pytest.approx(0.458752, rel=1e-12)
    s = u[("aten::sum",)]
    assert s["time sum (µs)"] == 4 and s["perf model"]


def test_layer_norm_forward_bytes_include_saved_mean_and_rstd():
    tree, sh = _run(
        [
            X(
                "cpu_op",
                "aten::layer_norm",
                0,
                50,
                **{
                    "Input Dims": [[8, 1024], [], [1024], [1024], []],
                    "Input type": [BF16, "ScalarList", BF16, BF16, "Scalar"],
                    "Input Strides": [[1024, 1], [], [1], [1], []],
                    "Concrete Inputs": ["", "[1024]", "", "", "1e-05"],
                },
            ),
            X("cuda_runtime", "cudaLaunchKernel", 10, 5, correlation=1),
            K("layer_norm_kernel", 1000, 10, 1),
        ]
    )
    r = _rows(sh["unified_perf_summary"], "name")[("aten::layer_norm",)]
    # x + y: 2·8·1024·2 = 32,768; w + b: 2·1024·2 = 4,096; mean + rstd (fp32, 8 rows): 2·8·4
    # = 64 -> 36,928 B
    assert r["data moved (MB)"] == pytest.approx(0.036928, rel=1e-12)


# -- category counts count the ops that launch kernels, not their wrappers


def _conv_call(t0, corr):
    # aten::conv2d -> convolution -> _convolution -> miopen_convolution, which launches one
    # kernel: one convolution, as the ROCm traces of issue 19 record it
    return [
        X("cpu_op", "aten::conv2d", t0, 100),
        X("cpu_op", "aten::convolution", t0 + 1, 98),
        X("cpu_op", "aten::_convolution", t0 + 2, 96),
        X("cpu_op", "aten::miopen_convolution", t0 + 3, 94),
        X("cuda_runtime", "hipExtModuleLaunchKernel", t0 + 10, 5, correlation=corr),
        K("igemm_fwd_gtcx3_nhwc_fp16", 10_000 + t0, 20, corr),
    ]


def test_category_count_is_the_launching_ops():
    # 3 calls: ops_summary lists 4 names x 3 calls = 12 op instances in the Conv category;
    # the category row counts the 3 that launched the kernels (60 µs of direct time)
    ev = []
    for i in range(3):
        ev += _conv_call(1000 * i, i + 1)
    _, sh = _run(ev)
    ops = _rows(sh["ops_summary"], "name")
    assert sum(r["count"] for r in ops.values()) == 12
    cats = {r["category"] for r in ops.values()}
    by = {r["category"]: r for r in sh["ops_summary_by_category"].records()}
    (c,) = cats
    assert by[c]["count"] == 3 and by[c]["direct kernel time (µs)"] == 60
