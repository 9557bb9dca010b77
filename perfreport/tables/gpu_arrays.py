"""Flat arrays over a tree's GPU events, made once for the between-the-kernels sheets.

One pass over ``tree.gpu`` (in ts order) gives, per event: start, end, launch call start and
duration (NaN: no call in the trace, :attr:`GpuEvent.launch_call`), device and (device, stream)
codes, the launching op's name code, and the owner's start (NaN: unlinked). Everything else in
:mod:`~perfreport.tables.idle`, :mod:`~perfreport.tables.launches` and
:mod:`~perfreport.tables.steps` is numpy over these arrays.
"""

from __future__ import annotations

import msgspec
from itertools import compress

import numpy as np

from perfreport.events import DRIVER, RUNTIME
from perfreport.tables.kernel_codes import first_seen
from perfreport.tables.launcher_codes import launcher_table
from perfreport.tables.op_times import shared_uids

NAN = float("nan")
LAUNCH_CATS = (RUNTIME, DRIVER)


class GpuArrays(msgspec.Struct):
    ts: np.ndarray
    te: np.ndarray
    lts: np.ndarray
    ldur: np.ndarray
    dev: np.ndarray  # index into devices
    stream: np.ndarray  # index into streams [(device, stream)]
    op: np.ndarray  # index into op_names
    owner_ts: np.ndarray
    linked: np.ndarray  # bool: has a CPU launch (owner) in the trace
    devices: list
    streams: list
    op_names: list

    def __len__(self) -> int:
        return len(self.ts)


def _launch_columns(gpu):
    """(lts, ldur, ts, te) straight from the reader's columns when every event has them (the
    usual case: one vectorised gather each), else None."""
    if not gpu:
        return None
    src = gpu[0]._src
    if src.__class__ is tuple or getattr(src, "lts", None) is None:
        return None
    src, uid = shared_uids(gpu)
    if uid is None:
        return None
    ts = np.asarray(src.ts, dtype=np.float64)[uid]
    te = np.asarray(src.dur, dtype=np.float64)[uid]
    te += ts
    return np.asarray(src.lts)[uid], np.asarray(src.ldur)[uid], ts, te


def stream_codes(events, uids=None):
    """``(dev, stream, devices, streams)`` of ``events`` from the reader's ``ds`` column:
    int32 codes into ``devices`` and ``streams`` [(device, stream)], each numbered in order of
    first appearance (as a dict filled event by event numbers them); None when the events do
    not all read from one column set (then read them one by one). ``uids``: the events'
    :func:`~perfreport.tables.op_times.shared_uids`, when the caller has them."""
    src, uid = shared_uids(events) if uids is None else uids
    if uid is None or getattr(src, "ds", None) is None:
        return None
    ds = np.asarray(src.ds)[uid]
    u, first, inv = np.unique(ds, return_index=True, return_inverse=True)
    dev_code: dict = {}
    st_code: dict = {}
    dlut = np.empty(len(u), dtype=np.int32)
    slut = np.empty(len(u), dtype=np.int32)
    for j in np.argsort(first, kind="stable").tolist():  # first-appearance order
        d, st = src.devstreams[int(u[j])]
        dlut[j] = dev_code.setdefault(d, len(dev_code))
        slut[j] = st_code.setdefault((d, st), len(st_code))
    inv = inv.reshape(-1)
    return dlut[inv], slut[inv], list(dev_code), list(st_code)


def event_streams(gpu):
    """Each event's :attr:`GpuEvent.stream`, from the ``ds`` column's codes when the events
    read from the tree's columns (one lookup per distinct (device, stream)), else read one by one."""
    codes = stream_codes(gpu)
    if codes is None:
        return (g.stream for g in gpu)
    lut = [s for _, s in codes[3]]
    return map(lut.__getitem__, codes[1].tolist())


def gpu_arrays(tree, include_unlinked: bool = True) -> GpuArrays:
    gpu = tree.gpu if include_unlinked else [g for g in tree.gpu if g.launcher is not None]
    n = len(gpu)
    dev_code: dict = {}
    st_code: dict = {}
    op_code: dict = {}
    dev = np.empty(n, dtype=np.int32)
    stream = np.empty(n, dtype=np.int32)
    op = np.empty(n, dtype=np.int32)
    owner_ts = np.full(n, NAN)
    fast = _launch_columns(gpu)
    codes = stream_codes(gpu) if fast is not None else None
    if codes is not None:
        return _from_columns(gpu, fast, codes)
    lts = np.full(n, NAN) if fast is None else fast[0]
    ldur = np.full(n, NAN) if fast is None else fast[1]
    for i, g in enumerate(gpu):
        dev[i] = dev_code.setdefault(g.device, len(dev_code))
        stream[i] = st_code.setdefault((g.device, g.stream), len(st_code))
        lr = g.launcher
        if lr is not None:
            if lr.cat in LAUNCH_CATS:  # a launch call's record: the op above it, if any
                o = g.op
                name = o.name if o is not None else (g.launch_name or "(launch outside any op)")
            else:  # the launching op itself (GpuEvent.op)
                name = lr.name
            ow = g.owner
            owner_ts[i] = ow.ts if ow is not None else NAN
            if fast is None:
                c = g.launch_call
                if c is not None:
                    lts[i], ldur[i] = c
        else:
            name = "(unlinked)"
        op[i] = op_code.setdefault(name, len(op_code))
    if fast is not None:
        ts, te = fast[2], fast[3]
    else:
        ts = np.fromiter((g.ts for g in gpu), dtype=np.float64, count=n)
        te = np.fromiter((g.dur for g in gpu), dtype=np.float64, count=n)
        te += ts
    del fast
    linked = owner_ts == owner_ts
    return GpuArrays(ts, te, lts, ldur, dev, stream, op, owner_ts, linked, list(dev_code), list(st_code), list(op_code))


def _from_columns(gpu, fast, codes) -> GpuArrays:
    """:func:`gpu_arrays` when the columns hold every event (``fast``: :func:`_launch_columns`,
    ``codes``: :func:`stream_codes`). The op name and owner start depend on the event's
    ``launcher`` alone (:attr:`GpuEvent.op`, :attr:`GpuEvent.owner`, and for a launch call's
    record its name), so they are found once per launcher (:func:`launcher_table`) and gathered
    back by the events' launcher codes. An op name's codes number in order of first appearance
    over the events, as a dict filled event by event numbers them: the launchers are in order of
    first appearance, so a name's first launcher is that of its first event."""
    t = launcher_table(gpu, keep=False)  # (not held over the between-the-kernels sheets' peak)
    nl = len(t.launchers)
    plain = ~t.cat_is(LAUNCH_CATS)  # an op (the usual): its own name and start
    if t.none >= 0:
        plain[t.none] = False
    at = np.flatnonzero(plain)
    raw = np.empty(nl, dtype=np.int64)  # per launcher: its op name's code (into names, then extra)
    raw[at] = t.name[at]
    starts = np.full(nl, NAN)  # per launcher: its owner's start
    ops = list(compress(t.launchers, plain.tolist()))  # (bools, no int object per launcher)
    src, uid = shared_uids(ops)
    starts[at] = np.asarray(src.ts, dtype=np.float64)[uid] if uid is not None else [o.ts for o in ops]
    del ops, uid, src
    names = list(t.names)
    index: dict | None = None
    for i in np.flatnonzero(~plain).tolist():  # no launcher, or a launch call's record (rare)
        lr = t.launchers[i]
        if lr is None:
            name = "(unlinked)"
        else:  # the op above the call, if any (GpuEvent.op); its start that of GpuEvent.owner
            o = ow = lr
            while o is not None and o.cat in LAUNCH_CATS:
                o = o.parent
            name = o.name if o is not None else (lr.name or "(launch outside any op)")
            while ow.cat in LAUNCH_CATS and ow.parent is not None:
                ow = ow.parent
            starts[i] = ow.ts
        if index is None:
            index = {n: j for j, n in enumerate(names)}
        raw[i] = index.setdefault(name, len(names))
        if raw[i] == len(names):
            names.append(name)
    del plain, at
    ev_raw = raw[t.code]
    opa, first = first_seen(ev_raw)
    op_names = [names[r] for r in ev_raw[first].tolist()]
    del ev_raw, raw, first
    ots = starts[t.code]
    del starts
    lts, ldur, ts, te = fast
    dev, stream, devices, streams = codes
    linked = ots == ots
    return GpuArrays(ts, te, lts, ldur, dev, stream, opa, ots, linked, devices, streams, op_names)


__all__ = ["GpuArrays", "event_streams", "gpu_arrays", "stream_codes"]
