"""Kineto event decoding: typed msgspec records -> compact columns.

Event kinds the report does not use are dropped here, before any of their ``args`` are
decoded: ``python_function`` (unless asked for), memory instants, ``Trace`` spans.

Kept events are *not* turned into one Python object each. :class:`Collector` appends them
to typed columns (``array.array``: ``ts``/``dur`` as float64, names/categories/threads as
small integer codes into tables, ids as int64, interned ``args`` as an index): 45 bytes
per CPU event, 49 per GPU event. :func:`perfreport.tree.build_tree` nests and links
on these columns and materializes :class:`~perfreport.events.Op` /
:class:`~perfreport.events.GpuEvent` records only for what the report needs.
"""
from __future__ import annotations

from array import array
from collections import Counter

import msgspec

from perfreport.errors import BadInput
from perfreport.read.repair import loads_args
from perfreport.events import (CPU_OP, DRIVER, GPU_ANNOTATION, KERNEL, MEMCPY, MEMSET, NONE,
                               PYTHON, RUNTIME, SIDE, USER_ANNOTATION, GpuEvent, Op,
                               column_value)

Id = int | str

# int64 sentinels (NONE: no value; SIDE: a value that is not an int64, kept in a side dict)
_LO, _HI = NONE + 2, (1 << 63) - 1


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
    # NCCL/RCCL kernels carry their collective's fields (Kineto copies them from the
    # record_param_comms op): only their presence is decoded here, see Collector.gpu_comm
    coll: msgspec.Raw = msgspec.field(default=msgspec.Raw(), name="Collective name")


class RtArgs(msgspec.Struct, gc=False):
    correlation: int | None = None
    ext: int | None = msgspec.field(default=None, name="External id")


_R = msgspec.Raw


class OpArgs(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    """The usual ``args`` of a cpu_op / user_annotation, for the interning fast path.

    Volatile ids are decoded (or skipped); the other known keys stay raw bytes and form the
    interning key. Any other key makes decoding fail and the slow path handles the event.
    """
    ext: object = msgspec.field(default=None, name="External id")
    seq: object = msgspec.field(default=None, name="Sequence number")
    rf: _R = msgspec.field(default=_R(), name="Record function id")
    ev: _R = msgspec.field(default=_R(), name="Ev Idx")
    fin: _R = msgspec.field(default=_R(), name="finished")
    ci: _R = msgspec.field(default=_R(), name="Concrete Inputs")
    it: _R = msgspec.field(default=_R(), name="Input type")
    ist: _R = msgspec.field(default=_R(), name="Input Strides")
    idm: _R = msgspec.field(default=_R(), name="Input Dims")
    fwd: _R = msgspec.field(default=_R(), name="Fwd thread id")


EVENT_DECODER = msgspec.json.Decoder(list[Ev])
_gpu_args = msgspec.json.Decoder(GpuArgs).decode
_rt_args = msgspec.json.Decoder(RtArgs).decode
_op_args = msgspec.json.Decoder(OpArgs).decode
_any = msgspec.json.decode
_encode = msgspec.json.encode

# args keys that differ between otherwise identical ops; kept out of the interned dict
_VOLATILE = ("External id", "Ev Idx", "Record function id", "Sequence number",
             "finished", "Python parent id", "Python id")

_SHAPE_KEYS = ("Input Dims", "Input type", "Input Strides", "Concrete Inputs")
NOT_A_LIST = "record_shapes fields (Input Dims, ...) that were not lists wrapped in one"

# category codes (the ``cat`` column); the first four are the launch/op kinds used by the tree
CATS = (CPU_OP, USER_ANNOTATION, RUNTIME, DRIVER, PYTHON, KERNEL, MEMCPY, MEMSET)
C_CPU_OP, C_USER_ANNOTATION, C_RUNTIME, C_DRIVER, C_PYTHON, C_KERNEL, C_MEMCPY, C_MEMSET = range(8)
_CAT_CODE = {c: i for i, c in enumerate(CATS)}
CPU_CATS = {CPU_OP, USER_ANNOTATION, RUNTIME, DRIVER}
GPU_CATS = {KERNEL, MEMCPY, MEMSET}


def _i64(v) -> int:
    return v if type(v) is int and _LO <= v <= _HI else SIDE


class _Table:
    """Typed columns of one event kind; int64 columns use NONE / SIDE sentinels."""

    def __len__(self) -> int:
        return len(self.ts)

    def value(self, col: str, row: int):
        return column_value(self, col, row)


class CpuColumns(_Table):
    """CPU-side events (cpu_op, user_annotation, runtime/driver, python), one row each.

    ``cs`` holds the ``correlation`` of runtime/driver rows and the autograd ``Sequence
    number`` of the others; ``ext`` the ``External id``. Values that are not int64 are kept
    in ``side`` (``{(column, row): value}``) with :data:`SIDE` in the column.
    """

    def __init__(self) -> None:
        self.ts = array("d")
        self.dur = array("d")
        self.name = array("i")
        self.cat = array("b")
        self.thr = array("i")       # code into ``threads`` [(pid, tid)]
        self.ext = array("q")
        self.cs = array("q")
        self.args = array("i")      # index into ``args_table``, -1: none
        self.side: dict = {}


class GpuColumns(_Table):
    """GPU events (kernel, memcpy, memset), one row each, in reading order (row = uid)."""

    def __init__(self) -> None:
        self.ts = array("d")
        self.dur = array("d")
        self.name = array("i")
        self.cat = array("b")
        self.ds = array("i")        # code into ``devstreams`` [(device, stream)]
        self.corr = array("q")
        self.ext = array("q")
        self.nbytes = array("q")
        self.side: dict = {}


class Flows:
    """``ac2g`` flow points: id, location code (into ``Collector.locations``), ts."""

    def __init__(self) -> None:
        self.id = array("q")
        self.loc = array("i")
        self.ts = array("d")

    def __len__(self) -> int:
        return len(self.ts)


class Collector:
    """Accumulates event batches into columns (see the module docstring)."""

    def __init__(self, source: str, keep_python: bool = False):
        self.source = source
        self.keep_python = keep_python
        self.c = CpuColumns()
        self.g = GpuColumns()
        self.gpu_annotations: list[GpuEvent] = []
        self.gpu_comm: dict[int, dict] = {}        # GPU row -> args of a collective kernel
        self.flow_s = Flows()
        self.flow_f = Flows()
        self.names: list[str] = []                 # name code -> str
        self.threads: list[tuple] = []             # CPU thread code -> (pid, tid)
        self.devstreams: list[tuple] = []          # GPU code -> (device, stream)
        self.locations: list[tuple] = []           # flow location code -> (pid, tid)
        self.flow_ids: list = []                   # non-int flow ids, coded from 2**62
        self.args_table: list[dict] = []           # interned args dicts
        self.process_names: dict = {}
        self.process_labels: dict = {}
        self.thread_names: dict = {}
        self.n_events = 0
        self.repairs: Counter = Counter()          # what loads_args repaired in args
        self.consumed = False                      # set by build_tree (CPU columns freed)
        self._name_code: dict[str, int] = {}
        self._thr_code: dict[tuple, int] = {}
        self._ds_code: dict[tuple, int] = {}
        self._loc_code: dict[tuple, int] = {}
        self._fid_code: dict = {}
        self._args_fast: dict[bytes, int] = {}     # raw known-key bytes -> args index
        self._args_canon: dict[bytes, int] = {}    # canonical encoding -> args index
        cats = dict(_CAT_CODE)
        self._cpu_cats = {k: v for k, v in cats.items() if k in CPU_CATS or (keep_python and k == PYTHON)}
        self._gpu_cats = {k: v for k, v in cats.items() if k in GPU_CATS}

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
        return Op(uid, self.names[c.name[row]], CATS[cat], pid, tid, c.ts[row], c.dur[row],
                  self.args_table[a] if a >= 0 else None, cs if launch else None,
                  c.value("ext", row), None if launch else cs)

    def make_gpu(self, row: int) -> GpuEvent:
        g = self.g
        dev, stream = self.devstreams[g.ds[row]]
        return GpuEvent(row, self.names[g.name[row]], CATS[g.cat[row]], dev, stream, g.ts[row],
                        g.dur[row], g.value("corr", row), g.value("ext", row),
                        g.value("nbytes", row))

    # -- reading ---------------------------------------------------------------------------
    def _bad(self, ev: Ev, problem: str):
        raise BadInput(self.source, f"traceEvents[{self.n_events - 1}] ({ev.cat or ev.ph} "
                                    f"{ev.name[:60]!r}) {problem}")

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
        c_ts, c_dur, c_name, c_cat, c_thr = (c.ts.append, c.dur.append, c.name.append,
                                             c.cat.append, c.thr.append)
        c_ext, c_cs, c_args = c.ext.append, c.cs.append, c.args.append
        intern = self._intern_args
        rt_args = _rt_args
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
                                corr, ext = a.correlation, a.ext
                            c_args(-1)
                            try:           # typed: int or None
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
                    if ev.cat == "ac2g" and ev.id is not None and ev.ts is not None:
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
        if code is None:   # gpu_user_annotation: few, kept as records
            self.gpu_annotations.append(GpuEvent(len(g), name, GPU_ANNOTATION, dev, stream, ts, dur,
                                                 a.correlation, a.ext, a.nbytes))
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
        corr, ext, nb = a.correlation, a.ext, a.nbytes
        try:               # typed: int or None
            g.corr.append(NONE if corr is None else corr)
            g.ext.append(NONE if ext is None else ext)
            g.nbytes.append(NONE if nb is None else nb)
        except OverflowError:   # an id beyond int64: rare, take the exact path
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
        for k in _SHAPE_KEYS:          # record_shapes fields are positional lists
            if k in d and not isinstance(d[k], list):
                d[k] = [d[k]]
                self.repairs[NOT_A_LIST] += 1
        ext = d.get("External id")
        seq = d.get("Sequence number")
        for k in _VOLATILE:
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
            except BadInput:        # unreadable metadata args: names stay unknown
                return
        if not isinstance(a, dict):
            return
        if ev.name == "process_name":
            self.process_names[ev.pid] = a.get("name", "")
        elif ev.name == "process_labels":
            self.process_labels[ev.pid] = a.get("labels", "")
        else:
            self.thread_names[(ev.pid, ev.tid)] = a.get("name", "")
