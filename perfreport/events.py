"""Compact event records, made by the reader and nested/linked by the tree.

Only what the report needs is kept, in ``__slots__`` records (no per-event dict). The
``args`` of CPU events are decoded once and *interned* by the reader: ops with identical
arguments share one dict (volatile ids such as ``External id`` and ``Ev Idx`` are kept in
slots instead), so a trace with millions of ops holds only its distinct argument sets.
Treat ``Op.args`` as read-only.

``perf_meta`` is separate from ``args``: it is written only by passes (see
``perfreport.passes``), never by the reader.
"""
from __future__ import annotations

from types import MappingProxyType
from typing import Any, Iterator

import msgspec

_EMPTY: MappingProxyType = MappingProxyType({})
_decode = msgspec.json.decode

# CPU-side categories kept in the tree
CPU_OP = "cpu_op"
USER_ANNOTATION = "user_annotation"
RUNTIME = "cuda_runtime"
DRIVER = "cuda_driver"
PYTHON = "python_function"

# GPU-side categories
KERNEL = "kernel"
MEMCPY = "gpu_memcpy"
MEMSET = "gpu_memset"
GPU_ANNOTATION = "gpu_user_annotation"


class Op:
    """A CPU-side event: ``cpu_op``, ``user_annotation``, runtime/driver call (or python frame).

    ``parent``/``children`` nest events of one (pid, tid) by time. ``kernels`` holds the GPU
    events launched by this event itself: for a runtime call, the events with its
    correlation; for a cpu_op or annotation, those of its direct runtime children
    ("direct kernels").
    """

    __slots__ = ("uid", "name", "cat", "pid", "tid", "ts", "dur", "correlation", "ext_id",
                 "seq", "parent", "children", "kernels", "_args", "_meta")

    def __init__(self, uid: int, name: str, cat: str, pid, tid, ts: float, dur: float,
                 args: dict | bytes | None = None, correlation: int | None = None,
                 ext_id: int | None = None, seq: int | None = None):
        self.uid = uid
        self.name = name
        self.cat = cat
        self.pid = pid
        self.tid = tid
        self.ts = ts
        self.dur = dur
        self.correlation = correlation
        self.ext_id = ext_id
        self.seq = seq          # autograd "Sequence number" (links backward to forward)
        self.parent: Op | None = None
        self.children: list[Op] | None = None
        self.kernels: list[GpuEvent] | None = None
        if isinstance(args, (bytes, bytearray)):
            args = _decode(args) if args else None
        self._args = args
        self._meta: dict | None = None

    @property
    def end(self) -> float:
        return self.ts + self.dur

    @property
    def args(self) -> dict:
        return self._args if self._args is not None else _EMPTY

    # -- perf_meta: written only by passes --------------------------------------------
    @property
    def perf_meta(self):
        return self._meta if self._meta is not None else _EMPTY

    def set_meta(self, key: str, value: Any) -> None:
        if self._meta is None:
            self._meta = {}
        self._meta[key] = value

    # -- navigation -------------------------------------------------------------------
    def ancestors(self) -> Iterator["Op"]:
        p = self.parent
        while p is not None:
            yield p
            p = p.parent

    def walk(self) -> Iterator["Op"]:
        """This op and all its descendants, depth first, in time order."""
        stack = [self]
        while stack:
            o = stack.pop()
            yield o
            if o.children:
                stack.extend(reversed(o.children))

    def direct_kernels(self) -> list["GpuEvent"]:
        return self.kernels or []

    def subtree_kernels(self) -> list["GpuEvent"]:
        """Every GPU event launched anywhere in this subtree (each counted once)."""
        out: list[GpuEvent] = []
        for o in self.walk():
            if o.kernels and (o.parent is None or o.cat not in (RUNTIME, DRIVER)):
                out.extend(o.kernels)
        return out

    def __repr__(self) -> str:  # debugging aid
        return f"Op({self.uid}, {self.name!r}, {self.cat}, ts={self.ts}, dur={self.dur})"


class GpuEvent:
    """A GPU-side event: kernel, memcpy, memset (or a gpu_user_annotation range)."""

    __slots__ = ("uid", "name", "cat", "device", "stream", "ts", "dur", "correlation",
                 "ext_id", "nbytes", "launcher")

    def __init__(self, uid: int, name: str, cat: str, device, stream, ts: float, dur: float,
                 correlation: int | None, ext_id: int | None = None, nbytes: int | None = None):
        self.uid = uid
        self.name = name
        self.cat = cat
        self.device = device
        self.stream = stream
        self.ts = ts
        self.dur = dur
        self.correlation = correlation
        self.ext_id = ext_id
        self.nbytes = nbytes
        self.launcher: Op | None = None   # the runtime call (or op) that launched it

    @property
    def end(self) -> float:
        return self.ts + self.dur

    @property
    def op(self) -> Op | None:
        """The innermost cpu_op (or annotation) that launched this event, if any."""
        l = self.launcher
        if l is None:
            return None
        if l.cat in (RUNTIME, DRIVER):
            return l.parent
        return l

    def __repr__(self) -> str:
        return f"GpuEvent({self.uid}, {self.name[:40]!r}, {self.cat}, ts={self.ts}, dur={self.dur})"
