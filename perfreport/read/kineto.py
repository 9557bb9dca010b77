"""Kineto event decoding: typed msgspec records -> compact columns (:class:`Collector`).

Event kinds the report does not use are dropped here, before any of their ``args`` are
decoded: ``python_function`` (unless asked for), memory instants, ``Trace`` spans.

Kept events are *not* turned into one Python object each. :class:`Collector` appends them
to the typed columns of :mod:`perfreport.read.columns` (decoded as
:mod:`perfreport.read.schema` describes). :func:`perfreport.tree.build_tree` nests and links
on these columns and materializes :class:`~perfreport.events.Op` /
:class:`~perfreport.events.GpuEvent` records only for what the report needs.

The splitter first offers each batch's bytes to :meth:`Collector.add_doc`, which reads them in C
with no :class:`Ev` per event (or declines, and the batch is decoded as below).
:meth:`Collector.add` runs in C when the optional extension ``perfreport/read/_collect.c`` is
built (``pip install -e .`` builds it where a C compiler is found; without one the install
still succeeds); :meth:`Collector.add_python` is the same loop in Python, the reference, and what
runs without the extension or with ``PERFREPORT_PURE_PYTHON=1``.
"""

from __future__ import annotations

import os
from collections import Counter

import msgspec

from perfreport.events import GPU_ANNOTATION, NONE, PYTHON, GpuEvent, Op
from perfreport.read.columns import CpuColumns, Flows, GpuColumns
from perfreport.read.exact import ExactPaths
from perfreport.read.schema import C_DRIVER, C_KERNEL, C_RUNTIME, CAT_ALIASES, CAT_CODE, CATS, CPU_CATS, FLOW_CATS
from perfreport.read import schema
from perfreport.read.schema import GPU_CATS, Ev
from perfreport.read.schema import fast_gpu_args as _gpu_args, fast_op_args as _op_args
from perfreport.read.schema import fast_rt_args as _rt_args, fast_rt_args_kernel as _rt_args_kernel


class Collector(ExactPaths):
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
        # category -> code for the inline loop of ``add``: -1 for GPU annotations (exact path)
        self._kinds = {**self._cpu_cats, **self._gpu_cats, GPU_ANNOTATION: -1}

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
    def add(self, batch: list[Ev]) -> None:
        """Append a batch of events to the columns: :meth:`add_python`'s work, done by the C
        accelerator (``perfreport/read/_collect.c``) when it is built and not turned off
        (``PERFREPORT_PURE_PYTHON=1``); tests/read/test_collect_c.py holds the two equal."""
        if _C is None or not _C.add(self, batch):
            self.add_python(batch)

    def add_doc(self, doc, bare: bool = False, partial: bool = False) -> int | tuple[int, int] | None:
        """What ``add(EVENT_DECODER.decode(doc))`` does, read by the C accelerator from the
        bytes of the JSON array ``doc`` (``bare``: its items alone, ``ev, ev``, no brackets) with
        no :class:`Ev` per event: the number of events, or None, having done nothing, where it
        is unsure (bytes outside its strict grammar, an event msgspec would refuse; the caller
        decodes the array as before, so every error is msgspec's). With ``partial``, where the
        scan fails after whole events (a cut inside an event, the array's end, bad bytes), it
        takes those and answers ``(events, stop)``: ``doc[:stop]`` ends with the last of them.
        None always without the accelerator."""
        if _C is None:
            return None
        return _C.add_doc(self, doc, bare, partial)

    def add_python(self, batch: list[Ev]) -> None:
        """:meth:`add` in Python (the reference). The usual event is handled inline here,
        with every name bound to a local (about 1 µs of Python a kept event); anything else
        goes to the exact paths of :class:`~perfreport.read.exact.ExactPaths`, which
        :meth:`~perfreport.read.exact.ExactPaths.add_exact` runs for every event (the tests
        compare the two on every fixture)."""
        kinds = self._kinds
        name_code, names = self._name_code, self.names
        thr_code, threads = self._thr_code, self.threads
        ds_code, devstreams = self._ds_code, self.devstreams
        loc_code, locations = self._loc_code, self.locations
        args_fast, join = self._args_fast, b"\x00".join
        c, g, fs, ff = self.c, self.g, self.flow_s, self.flow_f
        c_ts, c_dur, c_name, c_cat, c_thr = c.ts.append, c.dur.append, c.name.append, c.cat.append, c.thr.append
        c_ext, c_cs, c_args = c.ext.append, c.cs.append, c.args.append
        g_ts, g_dur, g_name, g_cat, g_ds = g.ts.append, g.dur.append, g.name.append, g.cat.append, g.ds.append
        g_corr, g_ext, g_nb = g.corr.append, g.ext.append, g.nbytes.append
        launch_kernels = self.launch_kernels
        rt_args = _rt_args if launch_kernels is None else _rt_args_kernel
        op_args, gpu_args = _op_args, _gpu_args
        errors = (KeyError, msgspec.MsgspecError, RecursionError)
        last_pid = last_tid = object()
        thr = -1
        n = self.n_events
        try:
            for ev in batch:
                n += 1
                ph = ev.ph
                if ph == "X":
                    code = kinds.get(ev.cat)
                    if code is None:
                        continue
                    ts, dur = ev.ts, ev.dur
                    if ts is None or dur is None or dur < 0 or code < 0:
                        self.n_events = n
                        (self._gpu if code >= C_KERNEL or code < 0 else self._cpu)(ev, code if code >= 0 else None)
                        continue
                    name = ev.name
                    nc = name_code.get(name)
                    if nc is None:
                        nc = name_code[name] = len(names)
                        names.append(name)
                    raw = ev.args
                    if code >= C_KERNEL:  # kernel, memcpy, memset
                        try:
                            a = gpu_args(raw)
                        except errors:
                            a = None
                        if a is None or a.coll:
                            self.n_events = n
                            self._gpu(ev, code)
                            continue
                        ext = a.ext
                        g_corr(a.correlation)
                        g_ext(ext if ext != NONE else a.ext_old)
                        g_nb(a.nbytes)
                        dev, stream = a.device, a.stream
                        key = (ev.pid if dev is None else dev, ev.tid if stream is None else stream)
                        ds = ds_code.get(key)
                        if ds is None:
                            ds = ds_code[key] = len(devstreams)
                            devstreams.append(key)
                        g_ts(ts)
                        g_dur(dur)
                        g_name(nc)
                        g_cat(code)
                        g_ds(ds)
                        continue
                    pid, tid = ev.pid, ev.tid
                    if pid != last_pid or tid != last_tid:
                        key = (pid, tid)
                        thr = thr_code.get(key)
                        if thr is None:
                            thr = thr_code[key] = len(threads)
                            threads.append(key)
                        last_pid, last_tid = pid, tid
                    if code == C_RUNTIME or code == C_DRIVER:
                        try:
                            a = rt_args(raw)
                        except errors:  # no args, ids that are no int64, bad text: the exact path
                            self.n_events = n
                            self._cpu_row(ev, code, ts, dur, nc, thr)
                            continue
                        x, y = a.correlation, a.ext
                        if y == NONE:
                            y = a.ext_old
                    elif not raw:
                        ai, x, y = -1, NONE, NONE
                    else:
                        try:
                            a = op_args(raw)
                            ai = args_fast[join((a.ci, a.it, a.ist, a.idm, a.fwd))]
                        except errors:  # not seen yet, unknown keys, odd ids, bad text: the exact path
                            self.n_events = n
                            self._cpu_row(ev, code, ts, dur, nc, thr)
                            continue
                        x, y = a.seq, a.ext
                    c_ts(ts)
                    c_dur(dur)
                    c_name(nc)
                    c_cat(code)
                    c_thr(thr)
                    c_ext(y)
                    c_cs(x)
                    if code == C_RUNTIME or code == C_DRIVER:
                        c_args(-1)
                        if launch_kernels is not None and a.kernel and x != NONE:
                            launch_kernels[x] = (name, a.kernel)
                    else:
                        c_args(ai)
                elif ph == "s" or ph == "f":
                    fid = ev.id
                    if type(fid) is int and 0 <= fid < _FLOW_HI and ev.cat in FLOW_CATS and ev.ts is not None:
                        f = fs if ph == "s" else ff
                        key = (ev.pid, ev.tid)
                        loc = loc_code.get(key)
                        if loc is None:
                            loc = loc_code[key] = len(locations)
                            locations.append(key)
                        f.id.append(fid)
                        f.loc.append(loc)
                        f.ts.append(ev.ts)
                    else:
                        self._flow(ev)
                elif ph == "M":
                    self._metadata(ev)
        finally:
            self.n_events = n


_FLOW_HI = 1 << 62  # flow ids from here up code non-integer ids (Collector.flow_ids)


def _accelerator():
    """The C loop (``perfreport.read._collect``), or None: not built (no compiler at install
    time), turned off by ``PERFREPORT_PURE_PYTHON`` (any value but "" and "0"), or refusing the
    structs it was given. It takes schema's category codes and the columns' sentinels from here."""
    if os.environ.get("PERFREPORT_PURE_PYTHON", "") not in ("", "0"):
        return None
    try:
        from perfreport.read import _collect
    except ImportError:
        return None
    s = schema
    try:
        _collect.setup(
            Ev, s.FastGpuArgs, s.FastRtArgs, s.FastRtArgsKernel, s.FastOpArgs,
            _gpu_args, _rt_args, _rt_args_kernel, _op_args,
            (KeyError, msgspec.MsgspecError, RecursionError), FLOW_CATS,
            (C_RUNTIME, C_DRIVER, C_KERNEL, NONE, _FLOW_HI), msgspec.json.Decoder(Ev).decode,
        )  # fmt: skip
    except TypeError:
        return None
    return _collect


_C = _accelerator()


__all__ = ["Collector"]
