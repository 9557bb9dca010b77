"""Data-movement ops: concatenation and row gathers. 0 FLOP; bytes = elements read + written.

``aten::cat(Tensor[] tensors, int dim=0)`` and ``aten::stack(Tensor[] tensors, int dim=0)``
(PyTorch ``native_functions.yaml``): every input element is read once and written once into the
output, so bytes = 2 · Σ numel(input_i) · element size. The profiler records a ``TensorList``
argument's shapes but not its dtype (``Input type`` is ``"TensorList"``), so the element size
comes from the pass output ``element_bytes`` (pass "kernel element size": PyTorch's CUDA/HIP
concatenation kernel ``CatArrayBatchedCopy`` is instantiated on ``OpaqueType<N>``, N = the
element size in bytes, ``aten/src/ATen/native/cuda/Shape.cu``). Without it the row gives the
reason instead of a guess.

``aten::index_select(Tensor self, int dim, Tensor index)``: the output is ``self``'s shape with
``dim`` replaced by ``numel(index)``; bytes = index read (at its dtype) + the selected slices
read from ``self`` + the output written (both at ``self``'s dtype). ``self``'s other rows are
never touched, so they are not charged.

``aten::fill_(Tensor self, Scalar value)``, ``fill_.Tensor``, ``aten::zero_(Tensor self)``
(``native_functions.yaml``): every element of ``self`` written once, nothing read (the value is a
scalar): bytes = numel(self) · element size.

Pure data movement has no arithmetic: the roofline is the memory term alone. The compute spec is
the vector peak of the moved elements' precision (``dtypes.vector_precision``; a TensorList by its
element width: 2 bytes -> ``vector_bf16``), which a 0-FLOP call never reaches (a spec without that
peak is read at its FP32 vector peak: ``tables/perf.py``).
"""

from __future__ import annotations

from math import prod

from perfreport.errors import ModelError
from perfreport.models.args import arg_int, tensor
from perfreport.models.base import PerfModel
from perfreport.models.dtypes import bytes_per_element, precision_of_width, vector_precision


class _DataMovement(PerfModel):
    category = "DataMovement"
    kind = "vector"

    def flops(self) -> float:
        return 0.0

    def precision(self) -> str:
        return vector_precision(self.x.dtype)


class Concat(_DataMovement):
    """``aten::cat`` / ``aten::stack``: inputs read once, the same elements written once."""

    needs = ("element_bytes",)

    def __init__(self, op):
        super().__init__(op)
        dims = op.args.get("Input Dims")
        shapes = dims[0] if isinstance(dims, list) and dims else None
        if not isinstance(shapes, list) or not all(isinstance(s, list) for s in shapes):
            raise ModelError(f"{op.name}: argument 0 (tensors) is not a recorded TensorList")
        if any(not isinstance(x, int) or x < 0 for s in shapes for x in s):
            raise ModelError(f"{op.name}: impossible dimension in {shapes}")
        self.shapes = [tuple(s) for s in shapes]
        eb = (op.perf_meta or {}).get("element_bytes")
        if not isinstance(eb, int) or eb <= 0:
            raise ModelError(
                f"{op.name}: element size unknown (a TensorList records no dtype and "
                "no kernel of the op names its element type)"
            )
        self.element_bytes = eb
        self.dim = arg_int(op, 1, 0)

    def params(self) -> dict:
        return {
            "inputs": len(self.shapes),
            "elements": sum(prod(s) for s in self.shapes),
            "element bytes": self.element_bytes,
            "dim": self.dim,
        }

    def bytes(self) -> float:
        return 2.0 * sum(prod(s) for s in self.shapes) * self.element_bytes

    def precision(self) -> str:
        return precision_of_width(self.element_bytes)


class IndexSelect(_DataMovement):
    """``aten::index_select(self, dim, index)``: a gather of ``numel(index)`` slices of ``self``."""

    def __init__(self, op):
        super().__init__(op)
        self.x = tensor(op, 0, "self")
        self.index = tensor(op, 2, "index")
        dim = arg_int(op, 1, 0)
        nd = max(len(self.x.shape), 1)
        if dim is None or not -nd <= dim < nd:
            raise ModelError(f"{op.name}: dim {dim} out of range for shape {self.x.shape}")
        self.dim = dim % nd
        shape = list(self.x.shape) or [1]
        shape[self.dim] = self.index.numel
        self.out_shape = tuple(shape)

    def params(self) -> dict:
        return {"self": self.x.shape, "dim": self.dim, "indices": self.index.numel, "dtype": self.x.dtype}

    def bytes(self) -> float:
        moved = prod(self.out_shape) * bytes_per_element(self.x.dtype)
        return self.index.nbytes + 2.0 * moved


class Fill(_DataMovement):
    """``aten::fill_`` / ``aten::zero_``: ``self`` written once (see the module docstring)."""

    def __init__(self, op):
        super().__init__(op)
        self.x = tensor(op, 0, "self")

    def params(self) -> dict:
        return {"self": self.x.shape, "dtype": self.x.dtype}

    def bytes(self) -> float:
        return float(self.x.nbytes)
