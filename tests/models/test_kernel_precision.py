"""models/kernel_precision.py: the compute spec from the pass output ``kernel_math``, and the [TF32, FP32]
assumption of an FP32 matrix op whose kernels do not say (FLOPs of an FP32 mm worked by hand)."""

from __future__ import annotations

import pytest

from perfreport.models.conv import ConvNd, MiopenConv
from perfreport.models.gemm import Mm
from tests.kit import fake_op

F32 = ["float", "float"]


def _mm(meta=None, types=F32):
    return Mm(fake_op("aten::mm", [[64, 32], [32, 16]], types, meta=meta or {}))


def test_named_math_sets_the_peak():
    assert _mm({"kernel_math": "tf32"}).compute_spec() == "matrix_tf32"
    assert _mm({"kernel_math": "fp32"}).compute_spec() == "matrix_fp32"
    # MX / FP8 kernels use their own peak whatever the recorded dtype
    assert _mm({"kernel_math": "mxfp8"}, ["c10::BFloat16"] * 2).compute_spec() == "matrix_mxfp8"
    assert _mm({"kernel_math": "nvfp4"}, ["unsigned char"] * 2).compute_spec() == "matrix_nvfp4"
    # a named math leaves no assumption
    assert (
        _mm({"kernel_math": "tf32"}).assumptions() == [] and _mm({"kernel_math": "tf32"}).compute_spec_bounds() is None
    )


def test_unknown_fp32_math_is_an_assumption():
    m = _mm()
    # 2·64·32·16 = 65,536 FLOP; bytes (2,048 + 512 + 1,024)·4 = 14,336 B, the same at both ends
    assert m.flops() == 65_536 and m.bytes() == 14_336
    assert m.compute_spec() == "matrix_fp32" and m.compute_spec_bounds() == ("matrix_tf32", "matrix_fp32")
    (a,) = m.assumptions()
    assert "FP32 CUDA cores (PyTorch default matmul allow_tf32=False)" in a.text
    assert (a.bytes_min, a.bytes_max) == (14_336, 14_336)
    # bf16 GEMMs have no such unknown
    assert _mm(types=["c10::BFloat16"] * 2).assumptions() == []


@pytest.mark.parametrize("cls,spec", [(ConvNd, "matrix_tf32"), (MiopenConv, "matrix_fp32")])
def test_conv_point_follows_the_library_default(cls, spec):
    # cuDNN: allow_tf32 defaults to True; MIOpen runs FP32 convolutions as FP32
    dims = [[1, 8, 10, 10], [8, 8, 3, 3], [], [], [], [], []]
    op = fake_op("aten::conv2d", dims, F32 + [""] * 5, ["", "", "", "[1, 1]", "[0, 0]", "[1, 1]", "1"])
    if cls is MiopenConv:
        op = fake_op("aten::miopen_convolution", dims, F32 + [""] * 5, ["", "", "", "[0, 0]", "[1, 1]", "[1, 1]", "1"])
    m = cls(op)
    assert m.compute_spec() == spec and m.compute_spec_bounds() == ("matrix_tf32", "matrix_fp32")
