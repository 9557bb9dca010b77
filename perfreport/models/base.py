"""The perf-model contract.

A perf model is a small class built from one op event. It reads the event's recorded
arguments (``op.args``: ``Input Dims``, ``Input type``, ``Input Strides``, ``Concrete Inputs``)
and the fields that passes wrote (``op.perf_meta``), and answers:

* ``params()``   -> ordered mapping of named parameters (shown as ``param: <name>`` columns);
* ``flops()``    -> floating-point operations of one call;
* ``bytes()``    -> bytes moved to/from device memory by one call (at the actual dtypes);
* ``precision()``-> compute precision name (``bf16``, ``fp16``, ``fp8``, ``fp32``, ...);
* ``kind``       -> ``"matrix"`` (tensor-core / MFMA work) or ``"vector"``;
* ``assumptions()`` -> the unknowns the figures depend on (:class:`Assumption`), each with the
  value the point figure uses and the bytes/FLOPs at its two bounds (empty when nothing is
  unknown: the roofline range then collapses to the point figure);
* ``needs``      -> the ``perf_meta`` keys (written by passes) the model reads, so the report
  can say "pass output missing" instead of guessing.

A model that cannot read its event raises :class:`perfreport.errors.ModelError` from
``__init__`` with a one-line reason; the row keeps its measured times and shows the reason.

Models are pure: no I/O, no access to the tree, no torch import.
"""

from __future__ import annotations

import msgspec
from typing import Any, Mapping, Protocol

from perfreport.errors import ModelError


class OpView(Protocol):
    """What a model may read from an op event."""

    name: str
    args: Mapping[str, Any]  # decoded trace args of the cpu_op
    perf_meta: Mapping[str, Any]  # fields written by passes (empty mapping if none)


class Assumption(msgspec.Struct, frozen=True):
    """A number the trace does not record, which one call's figures depend on.

    ``text`` names the unknown and the value the point figure uses, e.g. ``"distinct experts
    touched: 7.9 expected under uniform routing (bounds 8 … 128)"``. ``bytes_min``/``bytes_max``
    (and ``flops_min``/``flops_max``, None = FLOPs do not depend on it) are one call's totals at
    the two ends of the unknown, everything else held at the point value.
    """

    text: str
    bytes_min: float
    bytes_max: float
    flops_min: float | None = None
    flops_max: float | None = None


def bounds(model: "PerfModel", flops: float, nbytes: float) -> tuple[float, float, float, float]:
    """(flops_min, flops_max, bytes_min, bytes_max) of one call over all of ``model``'s assumptions.

    Assumptions are taken as independent: each shifts the point figure by its own
    ``bound - point`` delta, and the deltas add (never below zero).
    """
    f_lo = f_hi = flops
    b_lo = b_hi = nbytes
    for a in model.assumptions():
        b_lo += min(a.bytes_min, a.bytes_max) - nbytes
        b_hi += max(a.bytes_min, a.bytes_max) - nbytes
        if a.flops_min is not None and a.flops_max is not None:
            f_lo += min(a.flops_min, a.flops_max) - flops
            f_hi += max(a.flops_min, a.flops_max) - flops
    return max(f_lo, 0.0), f_hi, max(b_lo, 0.0), b_hi


class PerfModel:
    """Base class. Subclasses set ``category`` and ``kind`` and implement the four methods."""

    category: str = "other"
    kind: str = "vector"
    needs: tuple[str, ...] = ()  # perf_meta keys this model reads (pass outputs)
    # True when the model knows the op's attention window (or that it has none), so an unknown
    # window or sparsity cannot explain an above-roofline figure (tables/flags.above_roofline)
    window_ruled_out: bool = False

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

    def assumptions(self) -> list[Assumption]:
        """Unknowns the figures depend on (see :class:`Assumption`); none by default."""
        return []

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


__all__ = ["OpView", "PerfModel", "Assumption", "bounds", "ModelError", "input_dims", "input_type", "concrete_input"]
