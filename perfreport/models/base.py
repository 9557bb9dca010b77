"""The perf-model contract.

A perf model is a small class built from one op event. It reads the event's recorded
arguments (``op.args``: ``Input Dims``, ``Input type``, ``Input Strides``, ``Concrete Inputs``)
and the fields that passes wrote (``op.perf_meta``), and answers:

* ``params()``   -> ordered mapping of named parameters (shown as ``param: <name>`` columns);
* ``flops()``    -> floating-point operations of one call;
* ``bytes()``    -> bytes moved to/from device memory by one call (at the actual dtypes);
* ``precision()``-> compute precision name (``bf16``, ``fp16``, ``fp8``, ``fp32``, ...);
* ``kind``       -> ``"matrix"`` (tensor-core / MFMA work) or ``"vector"``.

A model that cannot read its event raises :class:`perfreport.errors.ModelError` from
``__init__`` with a one-line reason; the row keeps its measured times and shows the reason.

Models are pure: no I/O, no access to the tree, no torch import.
"""
from __future__ import annotations

from typing import Any, Mapping, Protocol

from perfreport.errors import ModelError


class OpView(Protocol):
    """What a model may read from an op event."""

    name: str
    args: Mapping[str, Any]        # decoded trace args of the cpu_op
    perf_meta: Mapping[str, Any]   # fields written by passes (empty mapping if none)


class PerfModel:
    """Base class. Subclasses set ``category`` and ``kind`` and implement the four methods."""

    category: str = "other"
    kind: str = "vector"

    def __init__(self, op: OpView):
        self.op = op

    def params(self) -> dict[str, Any]:
        raise NotImplementedError

    def flops(self) -> float:
        raise NotImplementedError

    def bytes(self) -> float:
        raise NotImplementedError

    def precision(self) -> str:
        raise NotImplementedError

    def compute_spec(self) -> str:
        """Name of the peak to use as roofline denominator, e.g. ``matrix_bf16``."""
        return f"{self.kind}_{self.precision()}"


# -- small helpers shared by models -------------------------------------------------

def input_dims(op: OpView, i: int) -> list[int]:
    dims = op.args.get("Input Dims")
    if dims is None or i >= len(dims):
        raise ModelError(f"{op.name}: no Input Dims[{i}] (trace recorded without record_shapes?)")
    d = dims[i]
    if not isinstance(d, list):
        raise ModelError(f"{op.name}: Input Dims[{i}] is not a tensor shape")
    return d


def input_type(op: OpView, i: int) -> str:
    types = op.args.get("Input type")
    if types is None or i >= len(types):
        raise ModelError(f"{op.name}: no Input type[{i}]")
    return types[i]


def concrete_input(op: OpView, i: int) -> str:
    ci = op.args.get("Concrete Inputs")
    if ci is None or i >= len(ci):
        return ""
    return ci[i]


__all__ = ["OpView", "PerfModel", "ModelError", "input_dims", "input_type", "concrete_input"]
