"""Quantization models on captured stand-in ops: input [8, 64] bf16 -> fp8 e4m3fn."""

from tests.models.serving_ops import model

IN, OUT = 8 * 64 * 2, 8 * 64 * 1  # 1024 B read, 512 B written


def test_static_scaled_fp8_quant():
    m = model("quant", "_C::static_scaled_fp8_quant")
    assert m.category == "Quant" and m.params()["scaling"] == "static"
    assert m.bytes() == IN + OUT + 4  # + scale [1] float
    assert m.flops() == 2 * 512  # scale, clamp per element


def test_dynamic_per_tensor_reads_input_twice():
    m = model("quant", "_C::dynamic_scaled_fp8_quant")
    assert m.bytes() == 2 * IN + OUT + 4  # global max pass + quantize pass
    assert m.flops() == 3 * 512


def test_dynamic_per_token():
    m = model("quant", "_C::dynamic_per_token_scaled_fp8_quant")
    assert m.bytes() == IN + OUT + 8 * 4  # one read; scales [8, 1] float
    assert m.compute_spec() == "vector_bf16"


def test_per_token_group_input_first():
    m = model("quant", "_C::per_token_group_fp8_quant")
    assert m.params()["dtype_in"] == "c10::BFloat16"
    assert m.bytes() == IN + OUT + 8 * 2 * 4  # scales [8, 64/32] float
