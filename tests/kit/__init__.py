"""The shared test kit: fake trace events, trace files and ops, so a test builds its input in
one line instead of copying a helper.

* :func:`X`: one complete (``ph: X``) Kineto event; ``args`` are keyword arguments.
* :func:`write_trace`: a trace file of events (and top-level metadata) in ``tmp_path``.
* :func:`fake_op`: a stand-in op with ``name``, ``args`` as ``record_shapes=True`` records them
  (``Input Dims``, ``Input type``, ``Input Strides``, ``Concrete Inputs``) and ``perf_meta``:
  all a perf model reads.
* :func:`cpu_op`: a real :class:`~perfreport.events.Op` with the same args and ``perf_meta``
  set through ``set_meta`` (for models whose base class needs an ``Op``).
"""

from __future__ import annotations

import json
from types import SimpleNamespace

from perfreport.events import Op


def X(cat, name, ts, dur, pid=1, tid=1, **args) -> dict:
    return {"ph": "X", "cat": cat, "name": name, "pid": pid, "tid": tid, "ts": ts, "dur": dur, "args": args}


def write_trace(tmp_path, events, meta=None, name: str = "t.json") -> str:
    p = tmp_path / name
    p.write_text(json.dumps({"traceEvents": events, **(meta or {})}))
    return str(p)


def shape_args(dims, types, concrete=None, strides=None) -> dict:
    """The ``args`` of an op recorded with shapes; empty strides and concrete inputs by default."""
    n = len(dims)
    return {
        "Input Dims": dims,
        "Input type": types,
        "Input Strides": strides if strides is not None else [[] for _ in range(n)],
        "Concrete Inputs": concrete if concrete is not None else ["" for _ in range(n)],
    }


def fake_op(name, dims, types, concrete=None, strides=None, meta=None) -> SimpleNamespace:
    return SimpleNamespace(name=name, args=shape_args(dims, types, concrete, strides), perf_meta=dict(meta or {}))


def cpu_op(name, dims, types, concrete=None, meta=None) -> Op:
    args = shape_args(dims, types, concrete)
    del args["Input Strides"]  # what the attention fixtures record
    o = Op(1, name, "cpu_op", 1, 1, 0.0, 10.0, args)
    for k, v in (meta or {}).items():
        o.set_meta(k, v)
    return o
