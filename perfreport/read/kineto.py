"""Kineto event decoding: typed msgspec records -> compact :mod:`perfreport.events` records.

Event kinds the report does not use are dropped here, before any of their ``args`` are
decoded: ``python_function`` (unless asked for), memory instants, ``Trace`` spans.
"""
from __future__ import annotations

import msgspec

from perfreport.errors import BadInput
from perfreport.events import (CPU_OP, DRIVER, GPU_ANNOTATION, KERNEL, MEMCPY, MEMSET, PYTHON,
                               RUNTIME, USER_ANNOTATION, GpuEvent, Op)

Id = int | str


class Ev(msgspec.Struct, array_like=False, gc=False):
    """One trace event; unknown keys are ignored, ``args`` stays raw until needed."""
    ph: str = ""
    cat: str = ""
    name: str = ""
    pid: Id = 0
    tid: Id = 0
    ts: float | None = None
    dur: float | None = None
    id: Id | None = None
    args: msgspec.Raw = msgspec.Raw()


class GpuArgs(msgspec.Struct, gc=False):
    correlation: int | None = None
    stream: Id | None = None
    device: int | None = None
    ext: int | None = msgspec.field(default=None, name="External id")
    nbytes: int | None = msgspec.field(default=None, name="bytes")


class RtArgs(msgspec.Struct, gc=False):
    correlation: int | None = None
    ext: int | None = msgspec.field(default=None, name="External id")


EVENT_DECODER = msgspec.json.Decoder(list[Ev])
_gpu_args = msgspec.json.Decoder(GpuArgs).decode
_rt_args = msgspec.json.Decoder(RtArgs).decode
_any = msgspec.json.decode
_encode = msgspec.json.encode

# args keys that differ between otherwise identical ops; kept out of the interned dict
_VOLATILE = ("External id", "Ev Idx", "Record function id", "Sequence number",
             "finished", "Python parent id", "Python id")

CPU_CATS = {CPU_OP, USER_ANNOTATION, RUNTIME, DRIVER}
GPU_CATS = {KERNEL, MEMCPY, MEMSET}


class Collector:
    """Accumulates records from event batches."""

    def __init__(self, source: str, keep_python: bool = False):
        self.source = source
        self.cpu: list[Op] = []
        self.gpu: list[GpuEvent] = []
        self.gpu_annotations: list[GpuEvent] = []
        self.flows_start: dict = {}      # ac2g id -> (pid, tid, ts)
        self.flows_end: dict = {}        # (pid, tid, ts) -> ac2g id  (GPU side)
        self.process_names: dict = {}
        self.process_labels: dict = {}
        self.thread_names: dict = {}
        self.n_events = 0
        self._interned: dict[bytes, dict] = {}
        self._names: dict[str, str] = {}
        self._cpu_cats = set(CPU_CATS) | ({PYTHON} if keep_python else set())

    def _bad(self, ev: Ev, problem: str):
        raise BadInput(self.source, f"event {self.n_events} ({ev.cat or ev.ph} {ev.name[:60]!r}) {problem}")

    def add(self, batch: list[Ev]) -> None:
        cpu_cats = self._cpu_cats
        names = self._names
        cpu_append = self.cpu.append
        gpu_append = self.gpu.append
        for ev in batch:
            self.n_events += 1
            ph = ev.ph
            if ph == "X":
                cat = ev.cat
                if cat in cpu_cats:
                    ts, dur = ev.ts, ev.dur
                    if ts is None or dur is None:
                        self._bad(ev, "has no ts/dur")
                    if dur < 0:
                        self._bad(ev, f"has a negative duration ({dur})")
                    name = names.setdefault(ev.name, ev.name)
                    if cat == CPU_OP or cat == USER_ANNOTATION:
                        args, ext, seq = self._intern_args(ev)
                        cpu_append(Op(len(self.cpu), name, cat, ev.pid, ev.tid, ts, dur, args,
                                      None, ext, seq))
                    else:
                        corr = ext = None
                        if ev.args:
                            a = _rt_args(ev.args)
                            corr, ext = a.correlation, a.ext
                        cpu_append(Op(len(self.cpu), name, cat, ev.pid, ev.tid, ts, dur, None,
                                      corr, ext))
                elif cat in GPU_CATS or cat == GPU_ANNOTATION:
                    ts, dur = ev.ts, ev.dur
                    if ts is None or dur is None:
                        self._bad(ev, "has no ts/dur")
                    if dur < 0:
                        self._bad(ev, f"has a negative duration ({dur})")
                    if not ev.args:
                        if cat == GPU_ANNOTATION:
                            a = GpuArgs()
                        else:
                            self._bad(ev, "has no args (device/stream/correlation)")
                    else:
                        try:
                            a = _gpu_args(ev.args)
                        except msgspec.ValidationError as exc:
                            self._bad(ev, f"has malformed args ({exc})")
                    name = names.setdefault(ev.name, ev.name)
                    dev = a.device if a.device is not None else ev.pid
                    g = GpuEvent(len(self.gpu), name, cat, dev, a.stream if a.stream is not None else ev.tid,
                                 ts, dur, a.correlation, a.ext, a.nbytes)
                    if cat == GPU_ANNOTATION:
                        self.gpu_annotations.append(g)
                    else:
                        gpu_append(g)
            elif ph == "s" or ph == "f":
                if ev.cat == "ac2g" and ev.id is not None and ev.ts is not None:
                    if ph == "s":
                        self.flows_start[ev.id] = (ev.pid, ev.tid, ev.ts)
                    else:
                        self.flows_end[(ev.pid, ev.tid, ev.ts)] = ev.id
            elif ph == "M":
                self._metadata(ev)

    def _intern_args(self, ev: Ev):
        raw = ev.args
        if not raw:
            return None, None, None
        try:
            d = _any(raw)
        except msgspec.DecodeError:
            self._bad(ev, "has malformed args")
        if not isinstance(d, dict):
            return None, None, None
        ext = d.get("External id")
        seq = d.get("Sequence number")
        for k in _VOLATILE:
            if k in d:
                del d[k]
        key = _encode(d)
        got = self._interned.get(key)
        if got is None:
            self._interned[key] = d
            got = d
        return got, ext, seq

    def _metadata(self, ev: Ev) -> None:
        if not ev.args:
            return
        if ev.name not in ("process_name", "process_labels", "thread_name"):
            return
        try:
            a = _any(ev.args)
        except msgspec.DecodeError:
            return
        if not isinstance(a, dict):
            return
        if ev.name == "process_name":
            self.process_names[ev.pid] = a.get("name", "")
        elif ev.name == "process_labels":
            self.process_labels[ev.pid] = a.get("labels", "")
        else:
            self.thread_names[(ev.pid, ev.tid)] = a.get("name", "")
