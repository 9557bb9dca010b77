"""models/moe/weights.py: E, H, I and bytes per expert solved from the weight tensors (either
orientation, gated or not, packed 4-bit with MX scales) or from a model config, by hand."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from perfreport.errors import ModelError
from perfreport.models.args import Tensor
from perfreport.models.moe.weights import MX_BLOCK, experts_from_config, solve_experts

OP = SimpleNamespace(name="vllm::fused_moe")
BF16, U8 = "c10::BFloat16", "unsigned char"


def test_gated_bf16_in_both_orientations():
    # 8 experts, H 64, I 96: w1 [E, 2I, H], w2 [E, H, I]
    e = solve_experts(OP, 64, Tensor((8, 192, 64), BF16), Tensor((8, 64, 96), BF16))
    assert (e.E, e.H, e.I, e.gated, e.weight_format, e.source) == (8, 64, 96, True, "bf16", "trace")
    assert e.bytes_per_expert == (192 * 64 + 64 * 96) * 2 == 36_864
    t = solve_experts(OP, 64, Tensor((8, 64, 192), BF16), Tensor((8, 96, 64), BF16))  # [E, H, 2I], [E, I, H]
    assert (t.I, t.gated, t.bytes_per_expert) == (96, True, 36_864)


def test_ungated_and_extra_bytes():
    e = solve_experts(OP, 64, Tensor((4, 96, 64), BF16), Tensor((4, 64, 96), BF16), extra_per_expert=10.0)
    assert (e.I, e.gated, e.bytes_per_expert) == (96, False, 2 * 96 * 64 * 2 + 10.0)


def test_packed_4_bit_in_uint8_storage_adds_mx_scales():
    # uint8 [8, 192, 32] holds H 64 as 32 bytes of two 4-bit values: p = 2
    e = solve_experts(OP, 64, Tensor((8, 192, 32), U8), Tensor((8, 64, 48), U8))
    assert (e.I, e.gated, e.weight_format) == (96, True, "mxfp4 (uint8 storage)")
    values = 64 * 192 + 96 * 64  # 18,432 values: 9,216 stored bytes + one scale byte per 32
    assert e.bytes_per_expert == values / 2 + values / MX_BLOCK == 9_792


def test_fp8_hint_on_uint8_storage():
    e = solve_experts(OP, 64, Tensor((8, 192, 64), U8), Tensor((8, 64, 96), U8), fmt_hint="fp8")
    assert (e.I, e.weight_format, e.bytes_per_expert) == (96, "fp8 (uint8 storage)", 18_432)


def test_refusals():
    with pytest.raises(ModelError, match="w1 has 8 experts, w2 4"):
        solve_experts(OP, 64, Tensor((8, 192, 64), BF16), Tensor((4, 64, 96), BF16))
    with pytest.raises(ModelError, match=r"do not match hidden size 128"):
        solve_experts(OP, 128, Tensor((8, 192, 64), BF16), Tensor((8, 64, 96), BF16))
    with pytest.raises(ModelError, match=r"w1 \[8, 192\] is not \[E, \*, \*\]"):
        solve_experts(OP, 64, Tensor((8, 192), BF16), Tensor((8, 64, 96), BF16))


def test_from_a_model_config_split_over_tensor_parallelism():
    e = experts_from_config(OP, 64, {"num_experts": 32, "intermediate_size": 192, "weight_format": "mxfp4"}, tp=2)
    assert (e.E, e.I, e.gated, e.source) == (32, 96, True, "model config")
    assert e.bytes_per_expert == (64 * 2 * 96 + 96 * 64) * (0.5 + 1 / 32) == 9_792
    with pytest.raises(ModelError, match="does not split over tensor parallelism 4"):
        experts_from_config(OP, 64, {"num_experts": 32, "intermediate_size": 90, "weight_format": "bf16"}, tp=4)
    with pytest.raises(ModelError, match="expert weight format 'nf4' unknown"):
        experts_from_config(OP, 64, {"num_experts": 32, "intermediate_size": 96, "weight_format": "nf4"})
    with pytest.raises(ModelError, match="lacks num_experts"):
        experts_from_config(OP, 64, {"intermediate_size": 96})
