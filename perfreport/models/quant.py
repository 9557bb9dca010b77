"""Activation quantization ops: 16/32-bit input -> FP8 / INT8 / FP4 output + scales
(category ``Quant``).

Bytes = input read at its dtype + quantized output written at its dtype (packed FP4: one
byte per recorded element, two values each) + every scale tensor once (read for static
scales, written for dynamic ones) + for DYNAMIC PER-TENSOR scaling a second read of the
input: one global absolute maximum must be known before any element is scaled, so the
input is read twice (vLLM runs a max-reduction kernel, then the quantize kernel) unless it
fits on chip. Per-token and per-group dynamic scales keep a row in registers: one read.
FLOPs per input element: 2 for static scaling (multiply by 1/scale, clamp; the cast is not
counted), 3 for dynamic scaling (+ the absolute-max comparison). Vector units at the
input's precision.

Tensors are told apart by dtype and size, so each signature needs no positions: the input
is the largest 16/32-bit floating tensor, the output the largest quantized (FP8 / INT8 /
uint8 / FP4) tensor, every other tensor is a scale (or zero point / upper bound).

Signatures (vLLM csrc/torch_bindings.cpp, aiter / sgl_kernel bindings):
* static:  ``_C::static_scaled_fp8_quant(result, input, scale[, group_shape])``,
  ``_C::static_scaled_int8_quant(result, input, scale, azp?)``,
  ``aiter::static_per_tensor_quant(out, input, scale)``;
* dynamic per tensor: ``_C::dynamic_scaled_fp8_quant(result, input, scale)``,
  ``aiter::dynamic_per_tensor_quant(out, input, scale)``;
* dynamic per token / group: ``_C::dynamic_per_token_scaled_fp8_quant(result, input,
  scale, scale_ub?)``, ``_C::dynamic_scaled_int8_quant(result, input, scale, azp?)``,
  ``_C::per_token_group_fp8_quant(input, output_q, output_s, group_size, eps, fp8_min,
  fp8_max, scale_ue8m0)``, ``_C::scaled_fp4_quant(output, input, output_scale,
  input_scale)``, ``aiter::dynamic_per_token_scaled_quant(out, input, scales, ...)``,
  ``sgl_kernel::sgl_per_token_quant_fp8(input, output_q, output_s)``,
  ``sgl_kernel::sgl_per_token_group_quant_fp8(input, output_q, output_s, group_size, ...)``.
"""

from __future__ import annotations

from perfreport.errors import ModelError
from perfreport.models.args import nargs, tensor_opt
from perfreport.models.base import PerfModel
from perfreport.models.dtypes import precision_of

WIDE = frozenset({"fp32", "fp16", "bf16"})
NARROW = frozenset({"fp8", "int8", "uint8", "fp4"})


class Quantize(PerfModel):
    category = "Quant"
    kind = "vector"
    scaling = "static"  # static | dynamic_tensor | dynamic_token

    def __init__(self, op):
        super().__init__(op)
        ts = [t for t in (tensor_opt(op, i) for i in range(nargs(op))) if t is not None]
        wide = [t for t in ts if precision_of(t.dtype) in WIDE]
        narrow = [t for t in ts if precision_of(t.dtype) in NARROW]
        if not wide or not narrow:
            raise ModelError(f"{op.name}: no 16/32-bit input and quantized output among {[t.dtype for t in ts]}")
        self.x = max(wide, key=lambda t: t.numel)
        self.q = max(narrow, key=lambda t: t.numel)
        self.scales = [t for t in ts if t is not self.x and t is not self.q]

    def params(self) -> dict:
        return {
            "op_shape": self.x.shape,
            "dtype_in": self.x.dtype,
            "dtype_out": self.q.dtype,
            "scaling": self.scaling,
            "scales": tuple(t.shape for t in self.scales),
        }

    def flops(self) -> float:
        return float((2 if self.scaling == "static" else 3) * self.x.numel)

    def bytes(self) -> float:
        reads = 2 if self.scaling == "dynamic_tensor" else 1
        return reads * self.x.nbytes + self.q.nbytes + sum(t.nbytes for t in self.scales)

    def precision(self) -> str:
        return precision_of(self.x.dtype)


class StaticQuant(Quantize):
    scaling = "static"


class DynamicTensorQuant(Quantize):
    scaling = "dynamic_tensor"


class DynamicTokenQuant(Quantize):
    scaling = "dynamic_token"


__all__ = ["Quantize", "StaticQuant", "DynamicTensorQuant", "DynamicTokenQuant"]
