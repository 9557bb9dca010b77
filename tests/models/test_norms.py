"""Norm models: RMSNorm (aten + vendor layouts), layer/group/batch norm, backward."""

import pytest

from perfreport.errors import ModelError
from perfreport.models import norms
from perfreport.models.registry import model_for
from tests.kit import fake_op

BF16, F32 = "c10::BFloat16", "float"


op = fake_op


def test_aten_rms_norm():
    m = norms.AtenRMSNorm(
        op(
            "aten::rms_norm",
            [[4, 8, 64], [], [64], []],
            [BF16, "ScalarList", BF16, "Scalar"],
            ["", "[64]", "", "1e-06"],
        )
    )
    # numel 2048, rows 32: 4·2048 + 2·32 = 8256 FLOPs
    assert m.flops() == 8256
    # x 4096 + y 4096 + w 128 = 8320 B
    assert m.bytes() == 8320 and m.category == "RMSNorm_fwd"


def test_vendor_rms_layouts_match_reference_values():
    # aiter::rms_norm(input, weight, eps, use_msr) from the vLLM capture trace
    m = model_for("aiter::rms_norm")(
        op("aiter::rms_norm", [[32, 2880], [2880], [], []], [BF16, BF16, "Scalar", "Scalar"])
    )
    # 4·92160 + 2·32 = 368704 FLOPs; (2·92160 + 2880)·2 = 374400 B (reference: same)
    assert (m.flops(), m.bytes()) == (368704, 374400)
    # aiter::rmsnorm2d_fwd_with_add_ck(out, input, res_in, res_out, weight, eps, msr)
    f = model_for("aiter::rmsnorm2d_fwd_with_add_ck")(
        op("aiter::rmsnorm2d_fwd_with_add_ck", [[32, 2880]] * 4 + [[2880], [], []], [BF16] * 5 + ["Scalar"] * 2)
    )
    # + residual add 92160 -> 460864; bytes (4·92160 + 2880)·2 = 743040 (reference: same)
    assert (f.flops(), f.bytes()) == (460864, 743040)


def test_inplace_fused_add_rms_norm():
    m = model_for("_C::fused_add_rms_norm")(
        op("_C::fused_add_rms_norm", [[8, 128], [8, 128], [128], []], [BF16, BF16, BF16, "Scalar"])
    )
    # reads input + residual, writes both: 4·1024·2 + weight 256 = 8448
    assert m.bytes() == 8448 and m.flops() == 5 * 1024 + 16


def test_layer_norm():
    m = norms.LayerNorm(
        op(
            "aten::native_layer_norm",
            [[2, 10, 32], [], [32], [32], []],
            [F32, "ScalarList", F32, F32, "Scalar"],
            ["", "[32]", "", "", "1e-05"],
        )
    )
    # numel 640, 20 rows: (5 + 2)·640 + 3·20 = 4540; bytes x + y 2·2560 + w, b 2·128
    # + saved mean and rstd, fp32 per row: 2·20·4 = 160 -> 5376 + 160 = 5536
    assert (m.flops(), m.bytes(), m.category) == (4540, 5536, "Norm_fwd")
    h = norms.LayerNorm(
        op(
            "aten::layer_norm",
            [[4, 64], [], [], [], []],
            [BF16, "ScalarList", "", "", "Scalar"],
            ["", "[64]", "", "", "1e-05"],
        )
    )
    # bf16, no affine, 4 rows: x + y 2·256·2 = 1024, mean/rstd at fp32 2·4·4 = 32 -> 1056
    assert h.bytes() == 1056


def test_group_and_batch_norm():
    g = norms.GroupNorm(
        op(
            "aten::group_norm",
            [[2, 8, 4, 4], [], [8], [8], [], []],
            [F32, "Scalar", F32, F32, "Scalar", "Scalar"],
            ["", "4", "", "", "", ""],
        )
    )
    # numel 256, 2·4 = 8 groups: 7·256 + 24 = 1816; bytes 2·1024 + 64 = 2112
    assert (g.flops(), g.bytes()) == (1816, 2112)
    b = norms.BatchNorm(
        op(
            "aten::native_batch_norm",
            [[2, 8, 4, 4], [8], [8], [8], [8], [], [], []],
            [F32] * 5 + ["Scalar"] * 3,
            [""] * 5 + ["False", "0.1", "1e-05"],
        )
    )
    # eval: 4·256 = 1024; bytes 2·1024 + 4·32 = 2176
    assert (b.flops(), b.bytes(), b.params()["training"]) == (1024, 2176, False)


def test_layer_norm_backward():
    m = norms.NormBackward(
        op(
            "aten::native_layer_norm_backward",
            [[4, 16], [4, 16], [], [4, 1], [4, 1], [16], [16], []],
            [F32, F32, "ScalarList", F32, F32, F32, F32, "ScalarList"],
            ["", "", "[16]", "", "", "", "", "[True, True, True]"],
        )
    )
    # 64 elements · (8 + 2 + 1) = 704
    assert m.flops() == 704 and m.category == "Norm_bwd"
    # read g 256 + x 256 + mean 16 + rstd 16 + w 64; write dx 256 + dw 64 + db 64 = 992
    assert m.bytes() == 992


def test_missing_normalized_shape():
    with pytest.raises(ModelError):
        norms.AtenRMSNorm(op("aten::rms_norm", [[4, 8], [], [8], []], [BF16, "ScalarList", BF16, ""]))
