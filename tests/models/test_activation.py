"""models/activation.py: gated activations out[..., d] = act(x[..., :d]) * x[..., d:], worked by hand."""

from __future__ import annotations

import pytest

from perfreport.errors import ModelError
from perfreport.models.activation import GeluAndMul, GeluTanhAndMul, SiluAndMul
from tests.kit import fake_op

BF16 = "c10::BFloat16"


def _op(out=(4, 64), x=(4, 128), name="_C::silu_and_mul"):
    return fake_op(name, [list(out), list(x)], [BF16, BF16])


@pytest.mark.parametrize(("cls", "per_out"), [(SiluAndMul, 5), (GeluAndMul, 6), (GeluTanhAndMul, 10)])
def test_flops_per_output_element_and_bytes(cls, per_out):
    m = cls(_op())
    assert m.flops() == per_out * 4 * 64  # 256 outputs
    assert m.bytes() == 4 * 128 * 2 + 4 * 64 * 2 == 1536  # input read + output written, bf16
    assert (m.category, m.kind, m.precision()) == ("Activation_fwd", "vector", "bf16")
    assert m.params()["op_shape"] == (4, 64)


def test_input_must_be_twice_the_output():
    with pytest.raises(ModelError, match=r"input \[4, 100\] is not twice output \[4, 64\]"):
        SiluAndMul(_op(x=(4, 100)))
