"""Pass "kernel math": TF32 / FP32 / MX math from kernel names (each accepted form with its source in
perfreport/passes/kernel_math.py FORMS and docs/models.md), and the rows it changes, worked by hand
on A100, V100 and GB200."""

from __future__ import annotations

import io
import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from perfreport.models.moe import experts as moe
from perfreport.passes.kernel_math import FORMS, classify, classify_one, pair_math
from perfreport.pipeline import load_tree
from perfreport.specs import load_arch
from perfreport.tables import build_tables

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("math,name,source", FORMS, ids=[f"{m}-{n[:40]}" for m, n, _ in FORMS])
def test_every_form_classifies_and_names_its_source(math, name, source):
    assert classify([name]) == math
    # the source names a repository (owner/name) and a file, and the docs list it
    assert "/" in source and any(x in source for x in (".py", ".h", ".json", ".gz", "cuBLAS", "cuDNN"))
    assert name.split("<")[-1][:30] in DOCS or name[:30] in DOCS, name
    paths = [w.strip(",;()") for w in source.split() if "/" in w]
    assert paths and all(p in DOCS for p in paths), paths


DOCS = (ROOT / "docs" / "models.md").read_text(encoding="utf-8")


@pytest.mark.parametrize(
    "name,math",
    [
        # not TF32: BF16 / FP16 operands spelled after "gemm" or before the accumulator letter
        ("cutlass_tensorop_s16816gemm_bf16_128x128_32x3_tn_align8", None),
        ("cutlass_tensorop_f16_s1688gemm_f16_64x64_32x2_nn_align1", None),
        # FP32 emulated by three TF32 products: neither peak
        ("cutlass_tensorop_s1688gemm_3xtf32_128x128_32x3_nn_align4", None),
        ("gemm_kernel_of_some_library", None),
        ("Cijk_Ailk_Bljk_SB_MT64x64x16_SN_1LDSB0_APM1", None),  # ROCm Tensile: no form cited
        # trtllm-gen: Bmm_<C>_<A><B>_<acc>: the output type does not set the rate
        ("Bmm_MxE2m1_MxE2m1MxE2m1_Fp32_t128x8x512_sm100a", "mxfp4"),
        ("Bmm_Bfloat16_MxE2m1MxE4m3_Fp32_t128x8x512_sm100a", "mxfp8"),
        ("Bmm_E2m1_E2m1E2m1_Fp32_t128x16x512_sm100a", "nvfp4"),
        ("Bmm_Bfloat16_E2m3E4m3_Fp32_t128x8x128_sm100a", "fp8"),
        ("Bmm_Bfloat16_E2m3E3m2_Fp32_t128x8x128_sm100a", "fp6"),
        ("Bmm_Fp16_E4m3Fp16_Fp32_t128x8x128_sm100a", "fp16"),
    ],
)
def test_classify_edges(name, math):
    assert classify_one(name) == math


def test_classify_mixed_lists():
    # a TF32 GEMM plus cuBLAS's split-K reduction (unclassified) and an FP32 SIMT helper: TF32
    assert classify(["sm80_xmma_gemm_f32f32_tf32f32_f32_nn", "splitKreduce_kernel", "ampere_sgemm_32x32_"]) == "tf32"
    # two MX formats that disagree: nothing
    assert classify(["Bmm_E4m3_E4m3E4m3_Fp32_x", "Bmm_Bfloat16_E2m1E2m1_Fp32_x"]) is None
    assert pair_math("MxE2m1", "E2m1") == "mxfp4" and pair_math("E4m3", "E2m1") == "fp8"


def _X(cat, name, ts, dur, tid=1, **args):
    return {"ph": "X", "cat": cat, "name": name, "pid": 1, "tid": tid, "ts": ts, "dur": dur, "args": args}


def _tree(kernel: str, dur: float, name="aten::mm", dims=None, types=("float", "float")):
    dims = dims or [[4096, 4096], [4096, 4096]]
    ev = [
        _X("cpu_op", name, 0, 50, **{"Input Dims": dims, "Input type": list(types)}),
        _X("cuda_runtime", "cudaLaunchKernel", 10, 5, correlation=1),
        _X("kernel", kernel, 100, dur, tid=7, device=0, stream=7, correlation=1),
    ]
    ev[-1]["pid"] = 0
    return load_tree(io.BytesIO(json.dumps({"traceEvents": ev}).encode()))


def _row(tree, spec, name="aten::mm"):
    sheets, cov = build_tables(tree, spec=spec)
    (r,) = [x for x in next(s for s in sheets if s.name == "unified_perf_summary").records() if x["name"] == name]
    return r, cov


A100 = load_arch("a100_sxm4_80gb")
# FP32 mm 4096^3: 2 * 4096^3 = 137,438,953,472 FLOP; A100 TF32 156 TFLOP/s -> 881.02 µs, FP32 19.5 ->
# 7048.15 µs; bytes 3 * 4096^2 * 4 = 201.3 MB -> 98.7 µs at 2.039 TB/s: compute-bound either way
F = 2 * 4096**3
T_TF32, T_FP32 = F / 156e12 * 1e6, F / 19.5e12 * 1e6


def test_tf32_kernel_uses_the_tf32_peak():
    # measured 1000 µs: 88.1% of the TF32 roofline (judged on FP32 it read 704.8%)
    r, cov = _row(_tree("sm80_xmma_gemm_f32f32_tf32f32_f32_nn_n_tilesize128x128x16", 1000.0), A100)
    assert r["compute spec"] == "matrix_tf32" and r["bound"] == "compute"
    assert r["roofline time (µs)"] == pytest.approx(T_TF32) == pytest.approx(881.02, abs=0.01)
    assert r["roofline mean (%)"] == pytest.approx(88.10, abs=0.01)
    assert r["flags"] == "" and cov.modelled_us == 1000.0


def test_simt_kernel_uses_the_fp32_peak():
    r, _ = _row(_tree("ampere_sgemm_128x64_nn", 7200.0), A100)
    assert r["compute spec"] == "matrix_fp32"
    assert r["roofline mean (%)"] == pytest.approx(T_FP32 / 7200 * 100) == pytest.approx(97.89, abs=0.01)


def test_unknown_fp32_math_is_an_assumption_with_bounds():
    # point: PyTorch's matmul default (FP32 CUDA cores) 7048.15 µs -> 704.8%; the TF32 bound
    # 881.02 µs -> 88.1%: within roofline at the lower bound, so the row stays modelled
    r, cov = _row(_tree("gemm_kernel_of_some_library", 1000.0), A100)
    assert r["compute spec"] == "matrix_fp32"
    assert r["roofline mean (%)"] == pytest.approx(T_FP32 / 10)
    assert (r["roofline time min (µs)"], r["roofline time max (µs)"]) == (pytest.approx(T_TF32), pytest.approx(T_FP32))
    assert (r["roofline % min"], r["roofline % max"]) == (pytest.approx(T_TF32 / 10), pytest.approx(T_FP32 / 10))
    assert "assumption: FP32 math: FP32 CUDA cores (PyTorch default matmul allow_tf32=False)" in r["flags"]
    assert "bounds: TF32 peak … FP32 peak" in r["flags"]
    assert "within roofline at the assumption's lower bound (88%)" in r["flags"]
    assert r["coverage"] == "modelled" and cov.modelled_us == 1000.0


def test_conv_default_is_tf32_and_v100_collapses_the_range():
    # cuDNN's default allow_tf32=True: an FP32 conv with unnamed kernels is TF32 at the point,
    # FP32 at the upper bound. conv2d x [1, 64, 56, 56], w [64, 64, 3, 3], pad 1: out 56x56,
    # FLOPs 2 * 64 * 3136 * 64 * 9 = 231,211,008 -> A100 TF32 1.482 µs, FP32 11.857 µs
    dims = [[1, 64, 56, 56], [64, 64, 3, 3], [], [], [], [], []]
    t = _tree("conv_kernel_x", 20.0, name="aten::conv2d", dims=dims, types=("float",) * 2 + ("",) * 5)
    for o in t.ops:
        if o.name == "aten::conv2d":
            o.args["Concrete Inputs"] = ["", "", "", "[1, 1]", "[1, 1]", "[1, 1]", "1"]
    f = 2 * 64 * 3136 * 64 * 9
    r, _ = _row(t, A100, "aten::conv2d")
    assert r["compute spec"] == "matrix_tf32" and r["GFLOP"] == pytest.approx(f / 1e9)
    assert "TF32 tensor cores (cuDNN default allow_tf32=True)" in r["flags"]
    # V100 has no TF32: point and both bounds on the FP32 peak 15.7 -> 14.727 µs
    r, _ = _row(t, load_arch("v100_sxm2"), "aten::conv2d")
    assert r["compute spec"] == "matrix_fp32"
    assert r["roofline time min (µs)"] == r["roofline time max (µs)"] == pytest.approx(f / 15.7e12 * 1e6)


def test_mx_kernel_uses_its_own_peak():
    # trtllm-gen MXFP8 x MXFP4 on GB200: matrix_mxfp8 5000 TFLOP/s (not BF16 2500).
    # mm [8192, 8192] x [8192, 8192] bf16: 2 * 8192^3 = 1.0995e12 FLOP -> 219.9 µs at 5000
    # (439.8 µs at BF16); bytes 3 * 8192^2 * 2 = 402.7 MB -> 50.3 µs at 8 TB/s: compute-bound
    k = "bmm_MxE4m3_MxE2m1MxE4m3_Fp32_t128x8x256u2_s3_et64x8_m64x8x32_cga1x1x1_16dp256b_rM_TN_transOut_sm100a"
    t = _tree(k, 300.0, dims=[[8192, 8192], [8192, 8192]], types=("c10::BFloat16", "c10::BFloat16"))
    r, _ = _row(t, load_arch("gb200"))
    assert r["compute spec"] == "matrix_mxfp8"
    assert r["roofline time (µs)"] == pytest.approx(2 * 8192**3 / 5000e12 * 1e6) == pytest.approx(219.90, abs=0.01)
    assert r["roofline mean (%)"] == pytest.approx(73.30, abs=0.01)


def test_moe_forward_gets_the_mx_peak():
    # vllm::moe_forward with trtllm-gen MXFP8 x MXFP4 kernels (FlashInfer's MoE on Blackwell): the
    # pass writes mxfp8 on the op, the model's compute spec is matrix_mxfp8 (was matrix_bf16 from
    # the bf16 activations)
    k = "bmm_MxE4m3_MxE2m1MxE4m3_Fp32_t128x8x256u2_sm100a"
    t = _tree(k, 30.0, name="vllm::moe_forward", dims=[[4, 64], [4, 8], []], types=("c10::BFloat16",) * 2 + ("",))
    (op,) = t.ops_named("vllm::moe_forward")
    assert op.perf_meta["kernel_math"] == "mxfp8"
    cfg = {"top_k": 2, "num_experts": 8, "intermediate_size": 32, "weight_format": "mxfp4"}
    view = SimpleNamespace(name=op.name, args=op.args, perf_meta={**op.perf_meta, "moe_config": cfg})
    m = moe.VllmMoeForward(view)
    assert m.compute_spec() == "matrix_mxfp8"
    assert moe.VllmMoeForward(
        SimpleNamespace(name=op.name, args=op.args, perf_meta={"moe_config": cfg})
    ).compute_spec() == ("matrix_bf16")


def test_linked_backward_node_gets_the_kernel_math():
    # AddmmBackward0 takes the GEMM-backward model through the "backward link" pass (perf_meta
    # "forward"), not through its name: the pass must still read its kernels (HTA's A100
    # trace_diff_control: 594 such nodes on cutlass_80_tensorop_s1688gemm_* were left FP32)
    fwd = {
        "Input Dims": [[256], [64, 128], [128, 256], [], []],
        "Input type": ["float", "float", "float", "Scalar", "Scalar"],
        "Concrete Inputs": ["", "", "", "1", "1"],
        "Sequence number": 7,
    }
    k = "void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_128x64_16x6_nn_align4>(Params)"
    ev = [
        _X("cpu_op", "aten::addmm", 0, 50, **fwd),
        _X("cuda_runtime", "cudaLaunchKernel", 10, 5, correlation=2),
        _X("cpu_op", "AddmmBackward0", 100, 50, tid=2, **{"Sequence number": 7}),
        _X("cuda_runtime", "cudaLaunchKernel", 110, 5, tid=2, correlation=1),
        _X("kernel", k, 200, 10, tid=7, device=0, stream=7, correlation=2),
        _X("kernel", k, 300, 10, tid=7, device=0, stream=7, correlation=1),
    ]
    ev[-1]["pid"] = ev[-2]["pid"] = 0
    t = load_tree(io.BytesIO(json.dumps({"traceEvents": ev}).encode()))
    (node,) = t.ops_named("AddmmBackward0")
    assert node.perf_meta["forward"]["name"] == "aten::addmm" and node.perf_meta["kernel_math"] == "tf32"
    # FLOPs 4 * 64 * 256 * 128 = 8,388,608 at A100 TF32 156 TFLOP/s = 0.05377 µs; bytes
    # 4 * (2*64*256 + 2*64*128 + 2*128*256) = 458,752 B at 2.039 TB/s = 0.22499 µs: memory-bound
    r, _ = _row(t, A100, "AddmmBackward0")
    assert r["compute spec"] == "matrix_tf32" and r["bound"] == "memory"
    assert r["roofline time (µs)"] == pytest.approx(458_752 / 2.039e12 * 1e6)
