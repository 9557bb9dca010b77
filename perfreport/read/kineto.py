"""Kineto event decoding: typed msgspec records -> compact columns (:class:`Collector`).

Event kinds the report does not use are dropped here, before any of their ``args`` are
decoded: ``python_function`` (unless asked for), memory instants, ``Trace`` spans.

Kept events are *not* turned into one Python object each. :class:`Collector` appends them
to the typed columns of :mod:`perfreport.read.columns` (decoded as
:mod:`perfreport.read.schema` describes). :func:`perfreport.tree.build_tree` nests and links
on these columns and materializes :class:`~perfreport.events.Op` /
:class:`~perfreport.events.GpuEvent` records only for what the report needs.
"""

from __future__ import annotations

from collections import Counter

import msgspec

from perfreport.errors import BadInput
from perfreport.events import GPU_ANNOTATION, NONE, PYTHON, SIDE, GpuEvent, Op
from perfreport.read.columns import INT64_HI as _HI, INT64_LO as _LO
from perfreport.read.columns import CpuColumns, Flows, GpuColumns
from perfreport.read.repair import loads_args
from perfreport.read.schema import (
    C_DRIVER,
    C_RUNTIME,
    CAT_ALIASES,
    CAT_CODE,
    CATS,
    CPU_CATS,
    FLOW_CATS,
    GPU_CATS,
    NOT_A_LIST,
    SHAPE_KEYS,
    VOLATILE,
    Ev,
    GpuArgs,
)
from perfreport.read.schema import decode_any as _any, decode_gpu_args as _gpu_args, decode_op_args as _op_args
from perfreport.read.schema import decode_rt_args as _rt_args, decode_rt_args_kernel as _rt_args_kernel
from perfreport.read.schema import encode as _encode


class Collector:
    """Accumulates event batches into columns (see the module docstring)."""

    def __init__(self, source: str, keep_python: bool = False, launch_kernels: bool = False):
        self.source = source
        self.keep_python = keep_python
        # correlation -> (launch call name, args.kernel), only when asked (graph capture)
        self.launch_kernels: dict[int, tuple[str, str]] | None = {} if launch_kernels else None
        self.c = CpuColumns()
        self.g = GpuColumns()
        self.gpu_annotations: list[GpuEvent] = []
        self.gpu_comm: dict[int, dict] = {}  # GPU row -> args of a collective kernel
        self.flow_s = Flows()
        self.flow_f = Flows()
        self.names: list[str] = []  # name code -> str
        self.threads: list[tuple] = []  # CPU thread code -> (pid, tid)
        self.devstreams: list[tuple] = []  # GPU code -> (device, stream)
        self.locations: list[tuple] = []  # flow location code -> (pid, tid)
        self.flow_ids: list = []  # non-int flow ids, coded from 2**62
        self.args_table: list[dict] = []  # interned args dicts
        self.process_names: dict = {}
        self.process_labels: dict = {}
        self.thread_names: dict = {}
        self.n_events = 0
        self.repairs: Counter = Counter()  # what loads_args repaired in args
        self.consumed = False  # set by build_tree (CPU columns freed)
        self._name_code: dict[str, int] = {}
        self._thr_code: dict[tuple, int] = {}
        self._ds_code: dict[tuple, int] = {}
        self._loc_code: dict[tuple, int] = {}
        self._fid_code: dict = {}
        self._args_fast: dict[bytes, int] = {}  # raw known-key bytes -> args index
        self._args_canon: dict[bytes, int] = {}  # canonical encoding -> args index
        cats = dict(CAT_CODE)
        self._cpu_cats = {k: v for k, v in cats.items() if k in CPU_CATS or (keep_python and k == PYTHON)}
        self._gpu_cats = {k: v for k, v in cats.items() if k in GPU_CATS}
        for old, new in CAT_ALIASES.items():  # older / other spellings (schema.CAT_ALIASES)
            (self._cpu_cats if new in CPU_CATS else self._gpu_cats)[old] = cats[new]

    def release_cpu(self) -> None:
        """Free the CPU columns and flows (``build_tree`` calls this once it made its records)."""
        self.c = CpuColumns()
        self.flow_s = Flows()
        self.flow_f = Flows()
        self._args_fast = {}
        self._args_canon = {}
        self._thr_code = {}
        self.consumed = True

    # -- sizes / inspection ---------------------------------------------------------------
    @property
    def n_cpu(self) -> int:
        return len(self.c)

    @property
    def n_gpu(self) -> int:
        return len(self.g)

    @property
    def cpu(self) -> list[Op]:
        """Every kept CPU event as an :class:`Op`, in reading order (uid = row).

        For inspection and tests; the tree materializes only what the report needs.
        """
        return [self.make_op(r, r) for r in range(len(self.c))]

    @property
    def gpu(self) -> list[GpuEvent]:
        """Every GPU event as a :class:`GpuEvent`, in reading order (uid = row)."""
        return [self.make_gpu(r) for r in range(len(self.g))]

    def make_op(self, row: int, uid: int) -> Op:
        c = self.c
        cat = c.cat[row]
        pid, tid = self.threads[c.thr[row]]
        a = c.args[row]
        cs = c.value("cs", row)
        launch = cat == C_RUNTIME or cat == C_DRIVER
        return Op(
            uid,
            self.names[c.name[row]],
            CATS[cat],
            pid,
            tid,
            c.ts[row],
            c.dur[row],
            self.args_table[a] if a >= 0 else None,
            cs if launch else None,
            c.value("ext", row),
            None if launch else cs,
        )

    def make_gpu(self, row: int) -> GpuEvent:
        g = self.g
        dev, stream = self.devstreams[g.ds[row]]
        return GpuEvent(
            row,
            self.names[g.name[row]],
            CATS[g.cat[row]],
            dev,
            stream,
            g.ts[row],
            g.dur[row],
            g.value("corr", row),
            g.value("ext", row),
            g.value("nbytes", row),
        )

    # -- reading ---------------------------------------------------------------------------
    def _bad(self, ev: Ev, problem: str):
        raise BadInput(self.source, f"traceEvents[{self.n_events - 1}] ({ev.cat or ev.ph} {ev.name[:60]!r}) {problem}")

    def _args(self, ev: Ev, decode):
        """``decode(ev.args)``, repairing bad text (see :mod:`perfreport.read.repair`)."""
        try:
            return decode(ev.args)
        except msgspec.ValidationError as exc:
            self._bad(ev, f"has malformed args ({exc})")
        except (msgspec.DecodeError, RecursionError):
            pass
        try:
            return decode(msgspec.json.encode(self._lenient(ev)))
        except msgspec.ValidationError as exc:
            self._bad(ev, f"has malformed args ({exc})")

    def _lenient(self, ev: Ev):
        try:
            return loads_args(ev.args, self.repairs)
        except RecursionError:
            self._bad(ev, "has args nested too deeply for the JSON decoder")
        except (msgspec.DecodeError, ValueError) as exc:
            self._bad(ev, f"has malformed args ({exc})")

    def add(self, batch: list[Ev]) -> None:
        cpu_cats = self._cpu_cats
        gpu_cats = self._gpu_cats
        name_code = self._name_code
        names = self.names
        thr_code = self._thr_code
        c = self.c
        c_ts, c_dur, c_name, c_cat, c_thr = (c.ts.append, c.dur.append, c.name.append, c.cat.append, c.thr.append)
        c_ext, c_cs, c_args = c.ext.append, c.cs.append, c.args.append
        intern = self._intern_args
        launch_kernels = self.launch_kernels
        rt_args = _rt_args if launch_kernels is None else _rt_args_kernel
        last_pid = last_tid = object()
        last_thr = -1
        n = self.n_events
        try:
            for ev in batch:
                n += 1
                if ev.ph == "X":
                    cat = ev.cat
                    code = cpu_cats.get(cat)
                    if code is not None:
                        ts, dur = ev.ts, ev.dur
                        if ts is None or dur is None:
                            self.n_events = n
                            self._bad(ev, "has no ts/dur")
                        if dur < 0:
                            self.n_events = n
                            self._bad(ev, f"has a negative duration ({dur})")
                        name = ev.name
                        nc = name_code.get(name)
                        if nc is None:
                            nc = name_code[name] = len(names)
                            names.append(name)
                        pid, tid = ev.pid, ev.tid
                        if pid != last_pid or tid != last_tid:
                            key = (pid, tid)
                            last_thr = thr_code.get(key)
                            if last_thr is None:
                                last_thr = thr_code[key] = len(self.threads)
                                self.threads.append(key)
                            last_pid, last_tid = pid, tid
                        row = len(c.ts)
                        c_ts(ts)
                        c_dur(dur)
                        c_name(nc)
                        c_cat(code)
                        c_thr(last_thr)
                        if code == C_RUNTIME or code == C_DRIVER:
                            corr = ext = None
                            if ev.args:
                                self.n_events = n
                                a = self._args(ev, rt_args)
                                corr, ext = a.correlation, a.ext if a.ext is not None else a.ext_old
                                if launch_kernels is not None and a.kernel and corr is not None:
                                    launch_kernels[corr] = (ev.name, a.kernel)
                            c_args(-1)
                            try:  # typed: int or None
                                c_ext(NONE if ext is None else ext)
                            except OverflowError:
                                c_ext(SIDE)
                                c.side[("ext", row)] = ext
                            try:
                                c_cs(NONE if corr is None else corr)
                            except OverflowError:
                                c_cs(SIDE)
                                c.side[("cs", row)] = corr
                        else:
                            self.n_events = n
                            ai, ext, seq = intern(ev)
                            c_args(ai)
                            self._put(c, "ext", row, ext, c_ext)
                            self._put(c, "cs", row, seq, c_cs)
                    else:
                        code = gpu_cats.get(cat)
                        if code is not None or cat == GPU_ANNOTATION:
                            self.n_events = n
                            self._gpu(ev, code)
                elif ev.ph == "s" or ev.ph == "f":
                    if ev.cat in FLOW_CATS and ev.id is not None and ev.ts is not None:
                        self._flow(self.flow_s if ev.ph == "s" else self.flow_f, ev)
                elif ev.ph == "M":
                    self._metadata(ev)
        finally:
            self.n_events = n

    @staticmethod
    def _put(cols, col: str, row: int, v, append) -> None:
        if v is None:
            append(NONE)
        elif type(v) is int and _LO <= v <= _HI:
            append(v)
        else:
            append(SIDE)
            cols.side[(col, row)] = v

    def _code(self, table: dict, lst: list, key) -> int:
        k = table.get(key)
        if k is None:
            k = table[key] = len(lst)
            lst.append(key)
        return k

    def _gpu(self, ev: Ev, code: int | None) -> None:
        ts, dur = ev.ts, ev.dur
        if ts is None or dur is None:
            self._bad(ev, "has no ts/dur")
        if dur < 0:
            self._bad(ev, f"has a negative duration ({dur})")
        if not ev.args:
            if code is None:
                a = GpuArgs()
            else:
                self._bad(ev, "has no args (device/stream/correlation)")
        else:
            a = self._args(ev, _gpu_args)
        name = ev.name
        nc = self._name_code.get(name)
        if nc is None:
            nc = self._name_code[name] = len(self.names)
            self.names.append(name)
        name = self.names[nc]
        dev = a.device if a.device is not None else ev.pid
        stream = a.stream if a.stream is not None else ev.tid
        g = self.g
        if code is None:  # gpu_user_annotation: few, kept as records
            self.gpu_annotations.append(
                GpuEvent(len(g), name, GPU_ANNOTATION, dev, stream, ts, dur, a.correlation, a.ext, a.nbytes)
            )
            return
        row = len(g.ts)
        if a.coll:
            try:
                d = _any(ev.args)
            except msgspec.DecodeError:
                d = None
            if isinstance(d, dict):
                self.gpu_comm[row] = d
        g.ts.append(ts)
        g.dur.append(dur)
        g.name.append(nc)
        g.cat.append(code)
        g.ds.append(self._code(self._ds_code, self.devstreams, (dev, stream)))
        corr, ext, nb = a.correlation, a.ext if a.ext is not None else a.ext_old, a.nbytes
        try:  # typed: int or None
            g.corr.append(NONE if corr is None else corr)
            g.ext.append(NONE if ext is None else ext)
            g.nbytes.append(NONE if nb is None else nb)
        except OverflowError:  # an id beyond int64: rare, take the exact path
            del g.corr[row:], g.ext[row:], g.nbytes[row:]
            self._put(g, "corr", row, corr, g.corr.append)
            self._put(g, "ext", row, ext, g.ext.append)
            self._put(g, "nbytes", row, nb, g.nbytes.append)

    def _flow(self, f: Flows, ev: Ev) -> None:
        fid = ev.id
        if type(fid) is not int or not (0 <= fid < (1 << 62)):
            fid = (1 << 62) + self._code(self._fid_code, self.flow_ids, fid)
        f.id.append(fid)
        f.loc.append(self._code(self._loc_code, self.locations, (ev.pid, ev.tid)))
        f.ts.append(ev.ts)

    def _intern_args(self, ev: Ev):
        """(args index or -1, External id, Sequence number) of a cpu_op / annotation."""
        raw = ev.args
        if not raw:
            return -1, None, None
        try:
            a = _op_args(raw)
        except (msgspec.ValidationError, msgspec.DecodeError, RecursionError):
            a = None
        if a is not None:
            key = b"\x00".join((a.ci, a.it, a.ist, a.idm, a.fwd))
            got = self._args_fast.get(key)
            if got is not None:
                return got, a.ext, a.seq
        try:
            d = _any(raw)
        except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
            d = self._lenient(ev)
        if not isinstance(d, dict):
            return -1, None, None
        for k in SHAPE_KEYS:  # record_shapes fields are positional lists
            if k in d and not isinstance(d[k], list):
                d[k] = [d[k]]
                self.repairs[NOT_A_LIST] += 1
        ext = d.get("External id")
        seq = d.get("Sequence number")
        for k in VOLATILE:
            if k in d:
                del d[k]
        canon = _encode(d)
        got = self._args_canon.get(canon)
        if got is None:
            got = self._args_canon[canon] = len(self.args_table)
            self.args_table.append(d)
        if a is not None:
            self._args_fast[key] = got
        return got, ext, seq

    def _metadata(self, ev: Ev) -> None:
        if not ev.args:
            return
        if ev.name not in ("process_name", "process_labels", "thread_name"):
            return
        try:
            a = _any(ev.args)
        except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
            try:
                a = self._lenient(ev)
            except BadInput:  # unreadable metadata args: names stay unknown
                return
        if not isinstance(a, dict):
            return
        if ev.name == "process_name":
            self.process_names[ev.pid] = a.get("name", "")
        elif ev.name == "process_labels":
            self.process_labels[ev.pid] = a.get("labels", "")
        else:
            self.thread_names[(ev.pid, ev.tid)] = a.get("name", "")


__all__ = ["Collector"]
