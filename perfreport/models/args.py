"""Reading recorded op arguments: tensors, Concrete Inputs, broadcasting.

``op.args`` holds four positional lists recorded by the profiler with ``record_shapes``:
``Input Dims`` (a shape per argument, ``[]`` for scalars/None), ``Input type`` (dtype name,
``Scalar``, ``ScalarList`` or ``''`` for None), ``Input Strides`` and ``Concrete Inputs``
(scalars as strings: ``''``, ``'0.'``, ``'True'``, ``'[-1]'``, ``'1'``, ``'1.0000000000000001e-05'``).
Everything here is parsed explicitly: trace strings are never evaluated as Python.
"""

from __future__ import annotations

import msgspec
from math import prod
from typing import Any

from perfreport.errors import ModelError
from perfreport.models.dtypes import bytes_per_element, dtype_from_code, is_tensor_type


class Tensor(msgspec.Struct, frozen=True):
    shape: tuple[int, ...]
    dtype: str
    stride: tuple[int, ...] | None = None

    @property
    def numel(self) -> int:
        return prod(self.shape)  # prod(()) == 1: a 0-d tensor holds one element

    @property
    def nbytes(self) -> float:
        return self.numel * bytes_per_element(self.dtype)


MAX_DIM = 1 << 48  # no real tensor dimension comes near; beyond it FLOP counts overflow


def _list(op, key: str) -> list:
    v = op.args.get(key)
    return v if isinstance(v, list) else []


def nargs(op) -> int:
    return len(_list(op, "Input type")) or len(_list(op, "Input Dims"))


def tensor_opt(op, i: int) -> Tensor | None:
    """Argument ``i`` as a Tensor, or None when it is absent, None, a scalar or a list."""
    dims, types = _list(op, "Input Dims"), _list(op, "Input type")
    if i >= len(dims) or i >= len(types):
        return None
    d, t = dims[i], types[i]
    if not is_tensor_type(t) or not isinstance(d, list):
        return None
    if any(not isinstance(x, int) for x in d):  # nested list: a TensorList
        return None
    if any(x < 0 or x > MAX_DIM for x in d):  # a corrupt trace, not a shape
        raise ModelError(f"{op.name}: argument {i} has an impossible dimension in {d} (negative or above {MAX_DIM})")
    strides = _list(op, "Input Strides")
    s = strides[i] if i < len(strides) and isinstance(strides[i], list) else None
    return Tensor(tuple(d), t, tuple(s) if s is not None and len(s) == len(d) else None)


def tensor(op, i: int, what: str = "") -> Tensor:
    t = tensor_opt(op, i)
    if t is None:
        if not op.args.get("Input Dims"):
            raise ModelError(f"{op.name}: no Input Dims (trace recorded without record_shapes?)")
        raise ModelError(f"{op.name}: argument {i}{' (' + what + ')' if what else ''} is not a tensor")
    return t


def concrete(op, i: int) -> str:
    ci = _list(op, "Concrete Inputs")
    v = ci[i] if i < len(ci) else ""
    return v if isinstance(v, str) else str(v)


def _bad(op, i: int, kind: str, s: str) -> ModelError:
    return ModelError(f"{op.name}: Concrete Inputs[{i}]={s!r} is not {kind}")


def parse_bool(s: str) -> bool | None:
    s = s.strip()
    if s in ("True", "true", "1"):
        return True
    if s in ("False", "false", "0"):
        return False
    if s in ("", "None"):
        return None
    raise ValueError(s)


def parse_int_list(s: str) -> list[int] | None:
    """'[1, 2]' -> [1, 2]; '3' -> [3]; '[]' -> []; '' -> None."""
    s = s.strip()
    if s in ("", "None"):
        return None
    if s.startswith(("[", "(")) and s.endswith(("]", ")")):
        inner = s[1:-1].strip()
        return [int(x) for x in inner.split(",") if x.strip()] if inner else []
    return [int(s)]


def arg_bool(op, i: int, default: bool | None = None) -> bool | None:
    s = concrete(op, i)
    try:
        v = parse_bool(s)
    except ValueError:
        raise _bad(op, i, "a bool", s) from None
    return default if v is None else v


def arg_int(op, i: int, default: int | None = None) -> int | None:
    s = concrete(op, i).strip()
    if s in ("", "None"):
        return default
    try:
        return int(s)
    except ValueError:
        raise _bad(op, i, "an int", s) from None


def arg_float(op, i: int, default: float | None = None) -> float | None:
    s = concrete(op, i).strip()
    if s in ("", "None"):
        return default
    try:
        return float(s)
    except ValueError:
        raise _bad(op, i, "a float", s) from None


def arg_int_list(op, i: int, default: list[int] | None = None) -> list[int] | None:
    s = concrete(op, i)
    try:
        v = parse_int_list(s)
    except ValueError:
        raise _bad(op, i, "an int list", s) from None
    return default if v is None else v


def arg_bool_list(op, i: int) -> list[bool] | None:
    s = concrete(op, i).strip()
    if s in ("", "None"):
        return None
    inner = s[1:-1] if s[:1] in "[(" else s
    try:
        return [bool(parse_bool(x)) for x in inner.split(",") if x.strip()]
    except ValueError:
        raise _bad(op, i, "a bool list", s) from None


def arg_dtype(op, i: int) -> str | None:
    """A ScalarType argument (recorded as its integer code) -> trace dtype name, or None."""
    code = arg_int(op, i)
    return None if code is None else dtype_from_code(code)


def broadcast(op, *shapes: tuple[int, ...]) -> tuple[int, ...]:
    """NumPy/PyTorch broadcasting of shapes (right-aligned; 1 stretches)."""
    nd = max((len(s) for s in shapes), default=0)
    out = []
    for k in range(nd):
        sizes = {s[len(s) - nd + k] for s in shapes if len(s) - nd + k >= 0}
        non1 = sizes - {1}
        if len(non1) > 1:
            raise ModelError(f"{op.name}: shapes {shapes} do not broadcast")
        out.append(non1.pop() if non1 else 1)
    return tuple(out)


def perf_meta(op) -> dict[str, Any]:
    pm = getattr(op, "perf_meta", None)
    return pm if isinstance(pm, dict) else dict(pm or {})


__all__ = [
    "Tensor",
    "tensor",
    "tensor_opt",
    "concrete",
    "nargs",
    "arg_bool",
    "arg_int",
    "arg_float",
    "arg_int_list",
    "arg_bool_list",
    "arg_dtype",
    "broadcast",
    "parse_bool",
    "parse_int_list",
    "perf_meta",
]
