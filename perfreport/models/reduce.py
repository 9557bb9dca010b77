"""Reductions, scans and softmax.

Reduce FLOPs = input elements × ops per element (sum/mean/amax/max/prod/any/argmax: 1;
  norm: 2 (mul + add); var/std: 3 (sub, mul, add); logsumexp: 4 (max, sub, exp, add)),
  + one op per OUTPUT element for mean/var/std (the final divide).
Scan (cumsum/cumprod): 1 per element; output has the input's size.
Softmax (``_softmax``/``softmax``/``_log_softmax``/``log_softmax``, along one dim): 5 per
  element (max, subtract, exp, sum, divide); placed in ``Reduce_fwd`` because it is a row
  reduction followed by a pointwise pass.
Bytes = input + output(s), each at its dtype. ``max.dim``/``min.dim`` also write int64
  indices; ``argmax``/``argmin`` write int64.
Output size = input size / product of reduced dims (``keepdim`` does not change it);
  ``''`` or ``[]`` dims mean every dim. Output dtype: an explicit ``dtype`` argument, else int64
  for integer/bool input to sum/prod/cumsum/cumprod (PyTorch rule), bool for any/all, else
  the input dtype. (The reference tool reports aten::mean over dim -1 with 1 output element
  and cumsum of int32 with an int32 output: both wrong.)
``aten::max(self, other)`` / ``min(self, other)`` (two tensors) are elementwise: handled as such.
Signatures: PyTorch native_functions.yaml (checked against torch 2.13 schemas).
"""

from __future__ import annotations

from math import prod

from perfreport.errors import ModelError
from perfreport.models.args import arg_bool, arg_dtype, arg_int_list, broadcast, nargs, tensor, tensor_opt
from perfreport.models.base import PerfModel
from perfreport.models.dtypes import bytes_per_element, is_floating, precision_of

# name (no namespace) -> (ops per input element, + per output element, dim arg index,
#                         minimum nargs for the dim form, dtype arg index for the dim form)
_REDUCE: dict[str, tuple[int, int, int, int, int | None]] = {
    "sum": (1, 0, 1, 3, 3),
    "mean": (1, 1, 1, 3, 3),
    "prod": (1, 0, 1, 3, 3),
    "nansum": (1, 0, 1, 3, 3),
    "amax": (1, 0, 1, 2, None),
    "amin": (1, 0, 1, 2, None),
    "max": (1, 0, 1, 2, None),
    "min": (1, 0, 1, 2, None),
    "argmax": (1, 0, 1, 2, None),
    "argmin": (1, 0, 1, 2, None),
    "any": (1, 0, 1, 2, None),
    "all": (1, 0, 1, 2, None),
    "var": (3, 1, 1, 3, None),
    "std": (3, 1, 1, 3, None),
    "logsumexp": (4, 0, 1, 2, None),
    "norm": (2, 0, 2, 3, None),
    "linalg_vector_norm": (2, 0, 2, 3, None),
}
_INT_PROMOTE = {"sum", "prod", "nansum", "cumsum", "cumprod"}


def _base(name: str) -> str:
    return name.split("::")[-1].split(".")[0].rstrip("_")


class Reduce(PerfModel):
    category = "Reduce_fwd"
    kind = "vector"

    def __init__(self, op):
        super().__init__(op)
        b = _base(op.name)
        self.x = tensor(op, 0, "self")
        self.kind_name = b
        self.index_out = b in ("argmax", "argmin")
        other = tensor_opt(op, 1) if b in ("max", "min") else None
        if other is not None:  # max.other: elementwise
            self.per_in, self.per_out = 0, 1
            self.out_shape = broadcast(op, self.x.shape, other.shape)
            self.extra_in = other.nbytes
            self.out_dtype = self.x.dtype
            return
        self.extra_in = 0
        if b not in _REDUCE:
            raise ModelError(f"{op.name}: not a known reduction")
        self.per_in, self.per_out, di, min_n, dtype_i = _REDUCE[b]
        dims = None
        out_dtype = None
        if nargs(op) >= min_n:
            dims = arg_int_list(op, di)
            if dtype_i is not None:
                out_dtype = arg_dtype(op, dtype_i)
        elif b in ("sum", "mean", "prod", "nansum") and nargs(op) == 2:
            out_dtype = arg_dtype(op, 1)
        nd = len(self.x.shape)
        red = set(range(nd)) if not dims else {d % nd for d in dims} if nd else set()
        self.reduced = tuple(sorted(red))
        self.out_shape = tuple(s for i, s in enumerate(self.x.shape) if i not in red)
        # max.dim / min.dim return (values, indices)
        self.index_out |= b in ("max", "min") and dims is not None
        self.out_dtype = out_dtype or self._default_dtype(b)

    def _default_dtype(self, b: str) -> str:
        if b in ("argmax", "argmin"):
            return "long int"
        if b in ("any", "all"):
            return "bool"
        if b in _INT_PROMOTE and not is_floating(self.x.dtype):
            return "long int"
        return self.x.dtype

    @property
    def out_numel(self) -> int:
        return prod(self.out_shape)

    def params(self) -> dict:
        return {
            "shape_in": self.x.shape,
            "dims": getattr(self, "reduced", None),
            "num_input_elems": self.x.numel,
            "num_output_elems": self.out_numel,
            "dtype_in": self.x.dtype,
            "dtype_out": self.out_dtype,
        }

    def flops(self) -> float:
        return float(self.per_in * self.x.numel + self.per_out * self.out_numel)

    def bytes(self) -> float:
        out = self.out_numel * (0 if self.kind_name in ("argmax", "argmin") else bytes_per_element(self.out_dtype))
        idx = self.out_numel * 8 if self.index_out else 0
        return self.x.nbytes + self.extra_in + out + idx

    def precision(self) -> str:
        return precision_of(self.x.dtype)


class Scan(Reduce):
    """aten::cumsum / cumprod(self, dim, dtype?)."""

    def __init__(self, op):
        PerfModel.__init__(self, op)
        self.x = tensor(op, 0, "self")
        self.kind_name = _base(op.name)
        self.per_in, self.per_out, self.extra_in, self.index_out = 1, 0, 0, False
        self.reduced = tuple(arg_int_list(op, 1) or [])
        self.out_shape = self.x.shape
        self.out_dtype = arg_dtype(op, 2) or self._default_dtype(self.kind_name)


class Softmax(Reduce):
    """aten::_softmax(self, dim, half_to_float) / softmax.int(self, dim, dtype?) and the
    log_softmax pair."""

    def __init__(self, op):
        PerfModel.__init__(self, op)
        self.x = tensor(op, 0, "self")
        self.kind_name = _base(op.name)
        self.per_in, self.per_out, self.extra_in, self.index_out = 5, 0, 0, False
        self.reduced = tuple(arg_int_list(op, 1) or [])
        self.out_shape = self.x.shape
        if self.kind_name.startswith("_"):
            self.out_dtype = "float" if arg_bool(op, 2, False) else self.x.dtype
        else:
            self.out_dtype = arg_dtype(op, 2) or self.x.dtype


__all__ = ["Reduce", "Scan", "Softmax"]
