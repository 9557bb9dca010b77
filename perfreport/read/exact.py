"""The exact per-event paths of :class:`~perfreport.read.kineto.Collector`.

:meth:`Collector.add <perfreport.read.kineto.Collector.add>` handles the usual event inline
(typed ``args`` that decode, ids that fit int64, interned ``args`` already seen) and hands
anything else to these methods: missing or bad ``ts``/``dur`` (one clear error), ``args``
that need repair (:mod:`perfreport.read.repair`), ids beyond int64 (kept in the table's
``side``), a first sight of an argument set (interned here), collective kernels, GPU
annotations, flows with non-integer ids and metadata. :meth:`ExactPaths.add_exact` runs every
event through them: the reference the inline loop is tested against (tests/read/test_exact.py).
"""

from __future__ import annotations

import msgspec

from perfreport.errors import BadInput
from perfreport.events import GPU_ANNOTATION, NONE, SIDE, GpuEvent
from perfreport.read.columns import INT64_HI as _HI, INT64_LO as _LO
from perfreport.read.repair import loads_args
from perfreport.read.schema import C_DRIVER, C_RUNTIME, FLOW_CATS, NOT_A_LIST, SHAPE_KEYS, VOLATILE, Ev, GpuArgs
from perfreport.read.schema import decode_any as _any, decode_gpu_args as _gpu_args, decode_op_args as _op_args
from perfreport.read.schema import decode_rt_args as _rt_args, decode_rt_args_kernel as _rt_args_kernel
from perfreport.read.schema import encode as _encode


class ExactPaths:
    """Mixin of :class:`~perfreport.read.kineto.Collector`: one event at a time, every case."""

    def _bad(self, ev: Ev, problem: str):
        raise BadInput(self.source, f"traceEvents[{self.n_events - 1}] ({ev.cat or ev.ph} {ev.name[:60]!r}) {problem}")

    def add_exact(self, batch: list[Ev]) -> None:
        """What :meth:`Collector.add` does, one exact method call per event (for tests)."""
        cpu_cats, gpu_cats = self._cpu_cats, self._gpu_cats
        for ev in batch:
            self.n_events += 1
            if ev.ph == "X":
                code = cpu_cats.get(ev.cat)
                if code is not None:
                    self._cpu(ev, code)
                else:
                    code = gpu_cats.get(ev.cat)
                    if code is not None or ev.cat == GPU_ANNOTATION:
                        self._gpu(ev, code)
            elif ev.ph == "s" or ev.ph == "f":
                self._flow(ev)
            elif ev.ph == "M":
                self._metadata(ev)

    def _cpu(self, ev: Ev, code: int) -> None:
        ts, dur = self._times(ev)
        thr = self._code(self._thr_code, self.threads, (ev.pid, ev.tid))
        self._cpu_row(ev, code, ts, dur, self._code(self._name_code, self.names, ev.name), thr)

    def _times(self, ev: Ev) -> tuple[float, float]:
        ts, dur = ev.ts, ev.dur
        if ts is None or dur is None:
            self._bad(ev, "has no ts/dur")
        if dur < 0:
            self._bad(ev, f"has a negative duration ({dur})")
        return ts, dur

    def _cpu_row(self, ev: Ev, code: int, ts: float, dur: float, nc: int, thr: int) -> None:
        """Append one CPU row (``ts``/``dur`` checked, name and thread coded)."""
        c = self.c
        row = len(c.ts)
        c.ts.append(ts)
        c.dur.append(dur)
        c.name.append(nc)
        c.cat.append(code)
        c.thr.append(thr)
        if code == C_RUNTIME or code == C_DRIVER:
            corr = ext = None
            if ev.args:
                lk = self.launch_kernels
                a = self._args(ev, _rt_args if lk is None else _rt_args_kernel)
                corr, ext = a.correlation, a.ext if a.ext is not None else a.ext_old
                if lk is not None and a.kernel and corr is not None:
                    lk[corr] = (ev.name, a.kernel)
            c.args.append(-1)
            self._put(c, "ext", row, ext, c.ext.append)
            self._put(c, "cs", row, corr, c.cs.append)
        else:
            ai, ext, seq = self._intern_args(ev)
            c.args.append(ai)
            self._put(c, "ext", row, ext, c.ext.append)
            self._put(c, "cs", row, seq, c.cs.append)

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

    @staticmethod
    def _put(cols, col: str, row: int, v, append) -> None:
        if v is None:
            append(NONE)
        elif type(v) is int and _LO <= v <= _HI:
            append(v)
        else:
            append(SIDE)
            cols.side[(col, row)] = v

    @staticmethod
    def _code(table: dict, lst: list, key) -> int:
        k = table.get(key)
        if k is None:
            k = table[key] = len(lst)
            lst.append(key)
        return k

    def _gpu(self, ev: Ev, code: int | None) -> None:
        ts, dur = self._times(ev)
        if not ev.args:
            if code is None:
                a = GpuArgs()
            else:
                self._bad(ev, "has no args (device/stream/correlation)")
        else:
            a = self._args(ev, _gpu_args)
        nc = self._code(self._name_code, self.names, ev.name)
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
        self._put(g, "corr", row, a.correlation, g.corr.append)
        self._put(g, "ext", row, a.ext if a.ext is not None else a.ext_old, g.ext.append)
        self._put(g, "nbytes", row, a.nbytes, g.nbytes.append)

    def _flow(self, ev: Ev) -> None:
        if ev.cat not in FLOW_CATS or ev.id is None or ev.ts is None:
            return
        f = self.flow_s if ev.ph == "s" else self.flow_f
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


__all__ = ["ExactPaths"]
