"""Elementwise models: unary, binary/ternary (with broadcasting), copies and casts.

FLOPs = number of OUTPUT elements: one operation per element whatever the function
(``neg`` and ``exp`` and ``silu`` all count 1). This is the usual roofline convention for
pointwise kernels (they are memory-bound; the FLOP figure only places them on the x-axis).
Fused gated activations (``silu_and_mul`` ...) count elementary ops instead: see activation.py.

Bytes = every tensor input at its own recorded shape and dtype (a broadcast operand is read
once, at its small size) + the output (broadcast shape, result dtype). In-place ops
(``add_``) read and write ``self``: same formula. 0-d tensors count one element (a
wrapped Python scalar recorded as a 0-d ``double`` counts 8 bytes, as it is recorded).

Result dtype (PyTorch type promotion, simplified): comparisons and logical ops give
``bool``; in-place ops keep ``self``'s dtype; otherwise the highest dtype among inputs with
dimensions, where 0-d tensors and Scalars only count when they are of a higher category
(bool < integer < floating), giving float32 (PyTorch's default dtype) for a float scalar
with integer tensors.

Copies: ``aten::copy_(self=dst, src, non_blocking)`` reads ``src`` at its dtype and writes
``dst`` at its dtype (a cast is a copy with two dtypes). ``aten::_to_copy(self, dtype, ...)``
and ``aten::to`` (``to.dtype``/``to.dtype_layout``: dtype code at 1; ``to.device``: at 2;
``to.other``: the other tensor's dtype) read ``self`` and write the result dtype; when no
dtype is given the result keeps ``self``'s dtype. (A ``to`` that returns ``self`` launches no
kernel: it has no kernel time, so the model is harmless there.)
Signatures: PyTorch native_functions.yaml (checked against torch 2.13 schemas).
"""

from __future__ import annotations

from math import prod

from perfreport.errors import ModelError
from perfreport.models.args import Tensor, arg_dtype, broadcast, concrete, nargs, tensor, tensor_opt
from perfreport.models.base import PerfModel
from perfreport.models.dtypes import bytes_per_element, is_floating, precision_of

# result is bool
COMPARISON = frozenset(
    {
        "eq",
        "ne",
        "lt",
        "le",
        "gt",
        "ge",
        "logical_and",
        "logical_or",
        "logical_xor",
        "logical_not",
        "isnan",
        "isinf",
        "isfinite",
        "isclose",
        "signbit",
    }
)
# unary ops whose result is floating even for integer input
FLOAT_RESULT = frozenset(
    {
        "exp",
        "exp2",
        "expm1",
        "log",
        "log2",
        "log10",
        "log1p",
        "sqrt",
        "rsqrt",
        "reciprocal",
        "sin",
        "cos",
        "tan",
        "asin",
        "acos",
        "atan",
        "sinh",
        "cosh",
        "tanh",
        "sigmoid",
        "erf",
        "erfc",
        "erfinv",
    }
)

_RANK = {
    "bool": 0,
    "uint8": 1,
    "int8": 1,
    "int16": 2,
    "uint16": 2,
    "int32": 3,
    "uint32": 3,
    "int64": 4,
    "uint64": 4,
    "fp8": 5,
    "fp16": 6,
    "bf16": 6,
    "fp32": 7,
    "fp64": 8,
    "complex32": 9,
    "complex64": 10,
    "complex128": 11,
}


def _base(name: str) -> str:
    """'aten::add_' -> 'add'."""
    b = name.split("::")[-1].split(".")[0]
    return b[:-1] if b.endswith("_") and not b.endswith("__") else b


def _category(dt: str) -> int:
    p = precision_of(dt)
    return 0 if p == "bool" else (2 if is_floating(dt) or p.startswith("complex") else 1)


def promote(op, tensors: list[Tensor], scalar_is_float: bool = False) -> str:
    dimmed = [t for t in tensors if t.shape] or tensors
    if not dimmed:
        raise ModelError(f"{op.name}: no tensor inputs")
    best = max(dimmed, key=lambda t: _RANK.get(precision_of(t.dtype), 0)).dtype
    if len({precision_of(t.dtype) for t in dimmed} & {"fp16", "bf16"}) == 2:
        best = "float"
    cat = _category(best)
    zero_d = [t for t in tensors if not t.shape]
    higher = max((_category(t.dtype) for t in zero_d), default=0)
    if scalar_is_float:
        higher = max(higher, 2)
    if higher > cat:
        best = "float" if higher == 2 else "long int"
    return best


class UnaryElementwise(PerfModel):
    """out = f(self): self at argument 0, same shape."""

    category = "UnaryElementwise"
    kind = "vector"

    def __init__(self, op):
        super().__init__(op)
        self.x = tensor(op, 0, "self")
        self.out_shape = self.x.shape
        self.out_dtype = self._out_dtype()

    def _out_dtype(self) -> str:
        b = _base(self.op.name)
        if b in COMPARISON:
            return "bool"
        if b in FLOAT_RESULT and not is_floating(self.x.dtype) and not self.op.name.endswith("_"):
            return "float"
        return self.x.dtype

    @property
    def out_numel(self) -> int:
        return prod(self.out_shape)

    def inputs(self) -> list[Tensor]:
        return [self.x]

    def params(self) -> dict:
        return {
            "op_shape": self.out_shape,
            "dtype_in": self.x.dtype,
            "dtype_out": self.out_dtype,
            "stride_input": self.x.stride,
        }

    def flops(self) -> float:
        return float(self.out_numel)

    def bytes(self) -> float:
        return sum(t.nbytes for t in self.inputs()) + self.out_numel * bytes_per_element(self.out_dtype)

    def precision(self) -> str:
        return precision_of(self.out_dtype)


class BinaryElementwise(UnaryElementwise):
    """out = f(a, b[, c]) with broadcasting; the first ``arity`` arguments are operands,
    anything after them (alpha, rounding mode, an ``out=`` tensor) is ignored."""

    category = "BinaryElementwise"
    arity = 2

    def __init__(self, op):
        PerfModel.__init__(self, op)
        self.operands: list[Tensor] = []
        scalar_float = False
        for i in range(min(self.arity, nargs(op))):
            t = tensor_opt(op, i)
            if t is not None:
                self.operands.append(t)
            else:
                s = concrete(op, i)
                scalar_float |= s not in ("", "True", "False", "None") and any(c in s for c in ".eEn")
        if not self.operands or tensor_opt(op, 0) is None:
            raise ModelError(f"{op.name}: argument 0 is not a tensor")
        self.x = self.operands[0]
        self.out_shape = broadcast(op, *(t.shape for t in self.operands))
        b = _base(op.name)
        if b in COMPARISON:
            self.out_dtype = "bool"
        elif op.name.endswith("_"):
            self.out_dtype = self.x.dtype
        elif b in ("masked_fill", "masked_fill_"):
            self.out_dtype = self.x.dtype
        else:
            ops = self.operands[1:] if b == "where" else self.operands
            self.out_dtype = promote(op, ops, scalar_float)

    def inputs(self) -> list[Tensor]:
        return self.operands

    def params(self) -> dict:
        ins = self.operands + [None] * (2 - len(self.operands))
        return {
            "shape_in1": ins[0].shape,
            "shape_in2": ins[1].shape if ins[1] else None,
            "dtype_in1": ins[0].dtype,
            "dtype_in2": ins[1].dtype if ins[1] else None,
            "dtype_out": self.out_dtype,
            "stride_in1": ins[0].stride,
            "stride_in2": ins[1].stride if ins[1] else None,
        }


class TernaryElementwise(BinaryElementwise):
    """where(cond, self, other), addcmul(self, t1, t2, value), lerp(self, end, weight) ..."""

    arity = 3


class Copy(UnaryElementwise):
    """aten::copy_(self=dst, src, non_blocking): read src, write dst (dtype may differ)."""

    def __init__(self, op):
        PerfModel.__init__(self, op)
        self.dst, self.x = tensor(op, 0, "self"), tensor(op, 1, "src")
        self.out_shape, self.out_dtype = self.dst.shape, self.dst.dtype

    def params(self) -> dict:
        return {
            "op_shape": self.out_shape,
            "dtype_in": self.x.dtype,
            "dtype_out": self.out_dtype,
            "stride_input": self.x.stride,
            "stride_output": self.dst.stride,
        }


class ToCopy(UnaryElementwise):
    """aten::_to_copy(self, dtype?, layout?, device?, pin_memory?, non_blocking, memory_format?)."""

    def _out_dtype(self) -> str:
        return arg_dtype(self.op, 1) or self.x.dtype


class To(UnaryElementwise):
    """aten::to, all overloads (see module docstring)."""

    def _out_dtype(self) -> str:
        op = self.op
        other = tensor_opt(op, 1)
        if other is not None:  # to.other
            return other.dtype
        try:
            dt = arg_dtype(op, 1)  # to.dtype / to.dtype_layout
        except ModelError:
            dt = None
        if dt is None and nargs(op) == 6:  # to.device(self, device, dtype, ...)
            dt = arg_dtype(op, 2)
        return dt or self.x.dtype


__all__ = [
    "UnaryElementwise",
    "BinaryElementwise",
    "TernaryElementwise",
    "Copy",
    "ToCopy",
    "To",
    "promote",
    "COMPARISON",
    "FLOAT_RESULT",
]
