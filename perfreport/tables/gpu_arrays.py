"""Flat arrays over a tree's GPU events, made once for the between-the-kernels sheets.

One pass over ``tree.gpu`` (in ts order) gives, per event: start, end, launch call start and
duration (NaN: no call in the trace, :attr:`GpuEvent.launch_call`), device and (device, stream)
codes, the launching op's name code, and the owner's start (NaN: unlinked). Everything else in
:mod:`~perfreport.tables.idle`, :mod:`~perfreport.tables.launches` and
:mod:`~perfreport.tables.steps` is numpy over these arrays.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from perfreport.events import DRIVER, RUNTIME

NAN = float("nan")
LAUNCH_CATS = (RUNTIME, DRIVER)


@dataclass
class GpuArrays:
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
    if any(g._src is not src for g in gpu):
        return None
    uid = np.fromiter((g.uid for g in gpu), dtype=np.int64, count=len(gpu))
    ts = np.asarray(src.ts, dtype=np.float64)[uid]
    te = np.asarray(src.dur, dtype=np.float64)[uid]
    te += ts
    return np.asarray(src.lts)[uid], np.asarray(src.ldur)[uid], ts, te


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


__all__ = ["GpuArrays", "gpu_arrays"]
