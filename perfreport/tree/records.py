"""Compact event records of the tree.

Only what the report needs is kept, in ``__slots__`` records (no per-event dict). The
trace's ``args`` of CPU events are kept as the raw JSON bytes and decoded on first use
(``Op.args``), so a multi-GB trace does not hold millions of dicts.

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
    correlation; for a cpu_op, those of its direct runtime children ("direct kernels").
    """

    __slots__ = ("uid", "name", "cat", "pid", "tid", "ts", "dur", "correlation",
                 "parent", "children", "kernels", "_raw", "_args", "_meta")

    def __init__(self, uid: int, name: str, cat: str, pid, tid, ts: float, dur: float,
                 raw_args: bytes | None, correlation: int | None = None):
        self.uid = uid
        self.name = name
        self.cat = cat
        self.pid = pid
        self.tid = tid
        self.ts = ts
        self.dur = dur
        self.correlation = correlation
        self.parent: Op | None = None
        self.children: list[Op] | None = None
        self.kernels: list[GpuEvent] | None = None
        self._raw = raw_args
        self._args: dict | None = None
        self._meta: dict | None = None

    @property
    def end(self) -> float:
        return self.ts + self.dur

    @property
    def args(self) -> dict:
        a = self._args
        if a is None:
            a = _decode(self._raw) if self._raw else {}
            if not isinstance(a, dict):
                a = {}
            self._args = a
        return a

    def drop_args_cache(self) -> None:
        """Free the decoded args dict (the raw bytes stay)."""
        self._args = None

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

    def subtree_kernels(self) -> list["GpuEvent"]:
        """Every GPU event launched by a runtime call anywhere in this subtree."""
        out: list[GpuEvent] = []
        for o in self.walk():
            if o.kernels and (o.cat == RUNTIME or o.cat == DRIVER):
                out.extend(o.kernels)
        return out

    def __repr__(self) -> str:  # for debugging only
        return f"Op({self.uid}, {self.name!r}, {self.cat}, ts={self.ts}, dur={self.dur})"


class GpuEvent:
    """A GPU-side event: kernel, memcpy or memset."""

    __slots__ = ("uid", "name", "cat", "device", "stream", "ts", "dur", "correlation",
                 "launcher", "_raw", "_args")

    def __init__(self, uid: int, name: str, cat: str, device, stream, ts: float, dur: float,
                 correlation: int | None, raw_args: bytes | None = None):
        self.uid = uid
        self.name = name
        self.cat = cat
        self.device = device
        self.stream = stream
        self.ts = ts
        self.dur = dur
        self.correlation = correlation
        self.launcher: Op | None = None   # the runtime call that launched it (None: unlinked)
        self._raw = raw_args
        self._args: dict | None = None

    @property
    def end(self) -> float:
        return self.ts + self.dur

    @property
    def args(self) -> dict:
        a = self._args
        if a is None:
            a = _decode(self._raw) if self._raw else {}
            self._args = a
        return a

    @property
    def op(self) -> Op | None:
        """The innermost cpu_op (or annotation) that launched this event, if any."""
        l = self.launcher
        if l is None:
            return None
        return l.parent if l.parent is not None else l

    def __repr__(self) -> str:
        return f"GpuEvent({self.uid}, {self.name[:40]!r}, {self.cat}, ts={self.ts}, dur={self.dur})"
