"""Max pooling with indices and nearest-neighbour resampling (categories ``Pool``, ``Resample``).

Memory-bound data movement; FLOPs place them on the roofline's x-axis only.

Max pooling, ``aten::max_pool{1,2,3}d_with_indices(self[N,C,*in], kernel_size, stride=[],
padding=0, dilation=1, ceil_mode=False)`` (PyTorch native_functions.yaml; ``max_pool1d``
is lowered to the 2d kernel, so 1d is read as given):
* output size per spatial dim (PyTorch ``MaxPool2d`` docs): ``out = ⌊(in + 2p − d·(k − 1) −
  1)/s⌋ + 1`` (⌈ ⌉ with ``ceil_mode``, dropping a last window that would start in the
  right padding); an empty ``stride`` means ``stride = kernel_size``; one-element lists apply
  to every dim;
* FLOPs = output elements × prod(kernel) comparisons; bytes = input + output + int64
  indices.
* ``aten::max_pool2d_with_indices_backward(grad_output, self, kernel_size, stride, padding,
  dilation, ceil_mode, indices)``: grad_output + indices read, grad_input (self's shape and
  dtype) written once; FLOPs = one accumulate per grad_output element.

Nearest resampling, ``aten::upsample_nearest{1,2,3}d(self, output_size, scales...)`` and the
``.vec(input, output_size?, scale_factors?)`` overloads, ``aten::_upsample_nearest_exact*``:
the output size is ``output_size`` or ``⌊in · scale⌋`` per dim; bytes = input + output,
FLOPs = one per output element (the copy convention of models/elementwise.py).
``aten::upsample_nearest{1,2,3}d_backward(grad_output, output_size, input_size, ...)``:
grad_output read + grad_input (``input_size``) written; FLOPs one per grad_output element.
"""

from __future__ import annotations

import math
import re
from math import prod

from perfreport.errors import ModelError
from perfreport.models.args import arg_bool, arg_int_list, concrete, tensor
from perfreport.models.base import PerfModel
from perfreport.models.dtypes import bytes_per_element, precision_of

INDEX_BYTES = 8  # indices are int64 (aten::max_pool2d_with_indices)


def _per_dim(v: list[int] | None, nd: int, default: list[int] | None, what: str, op) -> list[int]:
    if not v:
        if default is None:
            raise ModelError(f"{op.name}: {what} not recorded")
        v = default
    if len(v) == 1:
        v = v * nd
    if len(v) != nd:
        raise ModelError(f"{op.name}: {what} {v} does not fit {nd} spatial dims")
    return v


def pool_out(size: int, k: int, s: int, p: int, d: int, ceil_mode: bool) -> int:
    num = size + 2 * p - d * (k - 1) - 1
    out = (-(-num // s) if ceil_mode else num // s) + 1
    if ceil_mode and (out - 1) * s >= size + p:
        out -= 1
    return out


class MaxPoolWithIndices(PerfModel):
    category = "Pool"
    kind = "vector"

    def __init__(self, op):
        super().__init__(op)
        self.x = tensor(op, 0, "self")
        self.nd = int(op.name.split("max_pool")[1][0])
        if len(self.x.shape) < self.nd + 1:
            raise ModelError(f"{op.name}: input {list(self.x.shape)} has too few dims")
        nd = self.nd
        self.k = _per_dim(arg_int_list(op, 1), nd, None, "kernel_size", op)
        self.s = _per_dim(arg_int_list(op, 2), nd, self.k, "stride", op)
        self.p = _per_dim(arg_int_list(op, 3), nd, [0], "padding", op)
        self.d = _per_dim(arg_int_list(op, 4), nd, [1], "dilation", op)
        ceil_mode = bool(arg_bool(op, 5, False))
        spatial = self.x.shape[-nd:]
        self.out_shape = tuple(self.x.shape[:-nd]) + tuple(
            pool_out(spatial[i], self.k[i], self.s[i], self.p[i], self.d[i], ceil_mode) for i in range(nd)
        )
        if min(self.out_shape) <= 0:
            raise ModelError(f"{op.name}: empty output {self.out_shape}")

    def params(self) -> dict:
        return {
            "op_shape": self.x.shape,
            "out_shape": self.out_shape,
            "kernel": tuple(self.k),
            "stride": tuple(self.s),
            "dtype": self.x.dtype,
        }

    def flops(self) -> float:
        return float(prod(self.out_shape) * prod(self.k))

    def bytes(self) -> float:
        out = prod(self.out_shape)
        return self.x.nbytes + out * (bytes_per_element(self.x.dtype) + INDEX_BYTES)

    def precision(self) -> str:
        return precision_of(self.x.dtype)


class MaxPoolWithIndicesBackward(PerfModel):
    category = "Pool"
    kind = "vector"

    def __init__(self, op):
        super().__init__(op)
        self.g, self.x = tensor(op, 0, "grad_output"), tensor(op, 1, "self")
        self.idx = tensor(op, 7, "indices")

    def params(self) -> dict:
        return {"op_shape": self.x.shape, "grad_shape": self.g.shape, "dtype": self.g.dtype}

    def flops(self) -> float:
        return float(self.g.numel)

    def bytes(self) -> float:
        return self.g.nbytes + self.idx.nbytes + self.x.numel * bytes_per_element(self.g.dtype)

    def precision(self) -> str:
        return precision_of(self.g.dtype)


def _floats(s: str) -> list[float] | None:
    s = s.strip()
    if s in ("", "None", "[]"):
        return None
    inner = s[1:-1] if s[:1] in "[(" else s
    try:
        return [float(x) for x in inner.split(",") if x.strip()]
    except ValueError:
        return None


class UpsampleNearest(PerfModel):
    category = "Resample"
    kind = "vector"

    def __init__(self, op):
        super().__init__(op)
        self.x = tensor(op, 0, "self")
        self.nd = int(re.search(r"(\d)d", op.name).group(1))
        spatial = self.x.shape[-self.nd :]
        size = arg_int_list(op, 1)
        if not size:
            scales = _floats(concrete(op, 2))
            if not scales:
                raise ModelError(f"{op.name}: neither output_size nor scale_factors recorded")
            scales = scales * self.nd if len(scales) == 1 else scales
            size = [math.floor(spatial[i] * scales[i]) for i in range(self.nd)]
        size = _per_dim(size, self.nd, None, "output_size", op)
        self.out_shape = tuple(self.x.shape[: -self.nd]) + tuple(size)

    def params(self) -> dict:
        return {"op_shape": self.x.shape, "out_shape": self.out_shape, "dtype": self.x.dtype}

    def flops(self) -> float:
        return float(prod(self.out_shape))

    def bytes(self) -> float:
        return self.x.nbytes + prod(self.out_shape) * bytes_per_element(self.x.dtype)

    def precision(self) -> str:
        return precision_of(self.x.dtype)


class UpsampleNearestBackward(PerfModel):
    category = "Resample"
    kind = "vector"

    def __init__(self, op):
        super().__init__(op)
        self.g = tensor(op, 0, "grad_output")
        self.in_shape = tuple(arg_int_list(op, 2) or ())
        if len(self.in_shape) != len(self.g.shape):
            raise ModelError(f"{op.name}: input_size {list(self.in_shape)} not recorded")

    def params(self) -> dict:
        return {"grad_shape": self.g.shape, "in_shape": self.in_shape, "dtype": self.g.dtype}

    def flops(self) -> float:
        return float(self.g.numel)

    def bytes(self) -> float:
        return self.g.nbytes + prod(self.in_shape) * bytes_per_element(self.g.dtype)

    def precision(self) -> str:
        return precision_of(self.g.dtype)


__all__ = ["MaxPoolWithIndices", "MaxPoolWithIndicesBackward", "UpsampleNearest", "UpsampleNearestBackward", "pool_out"]
