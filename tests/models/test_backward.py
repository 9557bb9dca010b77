"""models/backward.py: an autograd node's figures from its linked forward op, worked by hand."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

import perfreport.models.registry  # noqa: F401  (installs the forward lookup)
from perfreport.errors import ModelError
from perfreport.models.backward import BackwardOfForward, has_backward_rule
from perfreport.models.registry import model_for
from tests.kit import shape_args


def _node(fwd_name, dims, types, children=()):
    fwd = {"name": fwd_name, "args": shape_args(dims, types)}
    node = SimpleNamespace(name="AddmmBackward0", args={}, perf_meta={"forward": fwd})
    node.walk = lambda: iter([node, *children])
    return node


def test_gemm_backward_is_two_gemms():
    # mm: A [4, 8] x B [8, 2] fp32 -> C [4, 2]
    m = BackwardOfForward(_node("aten::mm", [[4, 8], [8, 2]], ["float", "float"]))
    assert m.category == "GEMM_bwd" and m.params()["forward op"] == "aten::mm"
    assert m.flops() == 4 * 4 * 2 * 8 == 256
    assert m.bytes() == 2 * 32 + 2 * 128 + 2 * 64 == 448  # 2|C| + 2|A| + 2|B|


def test_the_bias_gradient_counts_only_when_its_sum_is_inside():
    dims, types = [[2], [4, 8], [8, 2], [], []], ["float", "float", "float", "Scalar", "Scalar"]
    outside = BackwardOfForward(_node("aten::addmm", dims, types))
    assert (outside.flops(), outside.bytes()) == (256, 448)
    inside = BackwardOfForward(_node("aten::addmm", dims, types, children=[SimpleNamespace(name="aten::sum")]))
    assert inside.flops() == 256 + 4 * 2  # + M·N adds
    assert inside.bytes() == 448 + 2 * 4  # + |bias|


def test_refusals():
    with pytest.raises(ModelError, match="no forward op linked through Sequence number"):
        BackwardOfForward(SimpleNamespace(name="MulBackward0", args={}, perf_meta={}))
    with pytest.raises(ModelError, match="no backward rule for forward op aten::gelu"):
        BackwardOfForward(_node("aten::gelu", [[4]], ["float"]))


def test_has_backward_rule():
    assert has_backward_rule(model_for("aten::mm"))
    assert not has_backward_rule(model_for("aten::gelu")) and not has_backward_rule(None)


def test_attention_backward_is_two_and_a_half_forwards():
    q = [1, 2, 16, 8]  # B, H, S, D in bf16: 512 B each
    name = "aten::_scaled_dot_product_flash_attention"
    dims, types = [q, q, q], ["c10::BFloat16"] * 3
    m = BackwardOfForward(_node(name, dims, types))
    fwd = model_for(name)(SimpleNamespace(name=name, args=shape_args(dims, types), perf_meta={}))
    assert m.category == "SDPA_bwd"
    assert m.flops() == 2.5 * fwd.fwd_flops() == 2.5 * (4 * 1 * 2 * 16 * 16 * 8)  # QK^T and PV: 2 x 2·B·H·S·S·D
    assert m.bytes() == 2 * (512 * 3) + 2 * 512
