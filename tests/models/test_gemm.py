"""GEMM models against hand-worked values and the TraceLens reference rows."""

import ast
import csv
from pathlib import Path
from types import SimpleNamespace

import pytest

from perfreport.errors import ModelError
from perfreport.models import gemm
from perfreport.models.registry import model_for
from tests.kit import fake_op

BF16, F32, FP8 = "c10::BFloat16", "float", "c10::Float8_e4m3fn"


op = fake_op


def test_mm_hand():
    m = gemm.Mm(op("aten::mm", [[64, 32], [32, 16]], [BF16, BF16]))
    # 2·M·N·K = 2·64·16·32 = 65536
    assert m.flops() == 65536
    # (64·32 + 32·16 + 64·16)·2 = (2048 + 512 + 1024)·2 = 7168
    assert m.bytes() == 7168
    assert m.precision() == "bf16" and m.kind == "matrix" and m.category == "GEMM"
    assert list(m.params())[:4] == ["B", "M", "N", "K"]


def test_transposed_layout_uses_shapes_not_strides():
    a = op("aten::mm", [[64, 32], [32, 16]], [BF16, BF16], strides=[[1, 64], [1, 32]])
    m = gemm.Mm(a)
    assert (m.M, m.N, m.K) == (64, 16, 32)
    assert m.params()["stride_A"] == (1, 64)


def test_addmm_bias():
    m = gemm.Addmm(
        op("aten::addmm", [[16], [8, 4], [4, 16], [], []], [F32, F32, F32, "Scalar", "Scalar"], ["", "", "", "1", "1"])
    )
    # 2·8·16·4 = 1024 + bias M·N = 128 -> 1152
    assert m.flops() == 1152
    # (8·4 + 4·16 + 8·16 + 16)·4 = (32 + 64 + 128 + 16)·4 = 960
    assert m.bytes() == 960
    assert m.params()["bias"] is True


def test_addmm_beta_zero_drops_bias():
    m = gemm.Addmm(
        op("aten::addmm", [[16], [8, 4], [4, 16], [], []], [F32, F32, F32, "Scalar", "Scalar"], ["", "", "", "0", "1"])
    )
    assert m.flops() == 1024 and m.bias is None


def test_bmm_and_baddbmm():
    m = gemm.Bmm(op("aten::bmm", [[3, 8, 4], [3, 4, 16]], [BF16, BF16]))
    # 2·3·8·16·4 = 3072; bytes (96 + 192 + 384)·2 = 1344
    assert (m.flops(), m.bytes()) == (3072, 1344)
    b = gemm.Baddbmm(
        op(
            "aten::baddbmm",
            [[3, 8, 16], [3, 8, 4], [3, 4, 16], [], []],
            [BF16] * 3 + ["Scalar"] * 2,
            ["", "", "", "1", "1"],
        )
    )
    # 3072 + 3·8·16 = 3456; bytes 1344 + 384·2 = 2112
    assert (b.flops(), b.bytes()) == (3456, 2112)


def test_scaled_mm_fp8():
    # _scaled_mm(A fp8 [128,256], B fp8 [256,64], scale_a fp32 [128,1], scale_b fp32 [1,64],
    #            bias None, scale_result None, out_dtype=15 (bf16), use_fast_accum)
    m = gemm.ScaledMm(
        op(
            "aten::_scaled_mm",
            [[128, 256], [256, 64], [128, 1], [1, 64], [], [], [], []],
            [FP8, FP8, F32, F32, "", "", "Scalar", "Scalar"],
            ["", "", "", "", "", "", "15", "False"],
        )
    )
    # FLOPs 2·128·64·256 = 4194304
    assert m.flops() == 4194304
    # A 128·256·1 = 32768, B 256·64·1 = 16384, C 128·64·2 (bf16) = 16384,
    # scales (128 + 64)·4 = 768  -> 66304
    assert m.bytes() == 66304
    assert m.precision() == "fp8" and m.compute_spec() == "matrix_fp8"
    assert m.params()["dtype_out"] == "c10::BFloat16"


def test_scaled_mm_fp4_counts_two_values_per_byte():
    m = gemm.ScaledMm(
        op(
            "aten::_scaled_mm",
            [[32, 64], [64, 16], [], []],
            ["c10::Float4_e2m1fn_x2"] * 2 + [F32, F32],
            ["", "", "", ""],
        )
    )
    # packed K=64 bytes -> logical K = 128; 2·32·16·128 = 131072
    assert m.K == 128 and m.flops() == 131072
    # bytes: A 32·64 + B 64·16 + C 32·16·1 (out = A dtype) + 2 scales 0-d fp32 (4 each)
    assert m.bytes() == 2048 + 1024 + 512 + 8


def test_vendor_gemms():
    r = gemm.RocmUnquantizedGemm(op("vllm::rocm_unquantized_gemm", [[2, 5, 8], [4, 8], [4]], [BF16] * 3))
    # M = 2·5 = 10, N = 4, K = 8: 2·10·4·8 = 640 + bias 40 = 680
    assert (r.M, r.N, r.K, r.flops()) == (10, 4, 8, 680)
    # (80 + 32 + 40 + 4)·2 = 312
    assert r.bytes() == 312
    a = gemm.AiterGemmA16W16(
        op(
            "aiter::gemm_a16w16",
            [[10, 8], [4, 8], [], [], [], [], []],
            [BF16, BF16, "", "Scalar", "", "", ""],
            ["", "", "", "6", "", "", ""],
        )
    )
    # otype 6 = float: C is 10·4·4 = 160 B; A 160 B, B 64 B -> 384
    assert (a.flops(), a.bytes(), a.out_dtype) == (640, 384, "float")
    c = gemm.CutlassScaledMm(
        op("_C::cutlass_scaled_mm", [[10, 4], [10, 8], [8, 4], [10, 1], [1, 4], []], [BF16, FP8, FP8, F32, F32, ""])
    )
    # out bf16 80 B + a 80 B + b 32 B + scales (10 + 4)·4 = 56 -> 248
    assert (c.flops(), c.bytes()) == (640, 248)


def test_bad_shapes_raise_model_error():
    with pytest.raises(ModelError):
        gemm.Mm(op("aten::mm", [[4, 3], [4, 3]], [BF16, BF16]))
    with pytest.raises(ModelError):
        gemm.Mm(SimpleNamespace(name="aten::mm", args={}, perf_meta={}))


REF = Path(__file__).parents[1] / "data" / "reference_gemm_sdpa.csv"


def reference_rows():
    with open(REF, newline="") as f:
        return list(csv.DictReader(line for line in f if not line.startswith("#")))


def ref_op(row):
    # ast.literal_eval is fine HERE: it reads the reference tool's CSV cells in a test,
    # never trace content in the product.
    keys = ("Input Dims", "Input type", "Input Strides", "Concrete Inputs")
    args = {k: ast.literal_eval(row[k + "_first"]) for k in keys}
    return SimpleNamespace(name=row["name"], args=args, perf_meta={})


@pytest.mark.parametrize(
    "row",
    [r for r in reference_rows() if "GEMM" in r["source"]],
    ids=lambda r: f"{r['source'].split('/')[0]}:{r['name']}",
)
def test_reference_gemm(row):
    m = model_for(row["name"])(ref_op(row))
    # their GFLOPS column is GFLOP (10^9); their "MB" is MiB (2^20 bytes)
    assert m.flops() / 1e9 == pytest.approx(float(row["GFLOPS_first"]), rel=1e-12)
    assert m.bytes() == pytest.approx(float(row["Data Moved (MB)_first"]) * 2**20, rel=1e-12)
