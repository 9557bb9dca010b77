"""Fused gated activations: out[..., d] = act(x[..., :d]) * x[..., d:]  (input [..., 2d]).

Signatures: ``_C::silu_and_mul(Tensor! out, Tensor input)`` and the ``gelu_and_mul`` /
``gelu_tanh_and_mul`` siblings (vLLM csrc/torch_bindings.cpp); ``sgl_kernel::silu_and_mul``,
``aiter::silu_and_mul`` ... take the same (out, input[, ...]) layout.

FLOPs per OUTPUT element count each elementary operation (mul, add, div, exp, erf, tanh) as 1:
  * silu:      x / (1 + exp(-x)) -> neg, exp, add, div = 4;  × gate = 5
  * gelu(erf): 0.5·x·(1 + erf(x/√2)) -> mul, erf, add, mul, mul = 5;  × gate = 6
  * gelu_tanh: 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))) -> 9;  × gate = 10
Bytes = input (2d per row) read + output (d per row) written, each at its dtype.
"""

from __future__ import annotations

from perfreport.errors import ModelError
from perfreport.models.args import tensor
from perfreport.models.base import PerfModel
from perfreport.models.dtypes import precision_of


class GatedActivation(PerfModel):
    category = "Activation_fwd"
    kind = "vector"
    flops_per_out = 5
    out_i, in_i = 0, 1

    def __init__(self, op):
        super().__init__(op)
        self.out, self.x = tensor(op, self.out_i, "out"), tensor(op, self.in_i, "input")
        if self.x.numel != 2 * self.out.numel:
            raise ModelError(f"{op.name}: input {list(self.x.shape)} is not twice output {list(self.out.shape)}")

    def params(self) -> dict:
        return {
            "op_shape": self.out.shape,
            "dtype_in": self.x.dtype,
            "dtype_out": self.out.dtype,
            "stride_input": self.x.stride,
            "stride_output": self.out.stride,
        }

    def flops(self) -> float:
        return float(self.flops_per_out * self.out.numel)

    def bytes(self) -> float:
        return self.x.nbytes + self.out.nbytes

    def precision(self) -> str:
        return precision_of(self.x.dtype)


class SiluAndMul(GatedActivation):
    flops_per_out = 5


class GeluAndMul(GatedActivation):
    flops_per_out = 6


class GeluTanhAndMul(GatedActivation):
    flops_per_out = 10


__all__ = ["GatedActivation", "SiluAndMul", "GeluAndMul", "GeluTanhAndMul"]
