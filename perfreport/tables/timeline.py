"""``gpu_timeline``: where each GPU's wall time went.

Per device, with ``U(...)`` the length of the union of intervals:

* computation    = U(kernels that are not communication, and memsets)
* communication  = U(NCCL/RCCL kernels)
* memcpy         = U(gpu_memcpy);   memset = U(gpu_memset) (part of computation)
* exposed comm   = U(comm) - U(comm ∩ computation)
* exposed memcpy = U(memcpy) - U(memcpy ∩ (computation ∪ comm))
* busy           = U(everything);   total = last end - first start;   idle = total - busy

so computation + exposed comm + exposed memcpy + idle = total (tested).
Unlinked kernels (no CPU launch in the trace window) are counted: they ran on the GPU.
"""
from __future__ import annotations

import re
from functools import lru_cache

import numpy as np

from perfreport.events import KERNEL, MEMCPY, MEMSET
from perfreport.tables.sheet import PCT, Sheet

COMM_RX = re.compile(r"nccl|rccl|all_?reduce|all_?gather|reduce_?scatter|alltoall", re.I)


@lru_cache(maxsize=None)
def is_comm_name(name: str) -> bool:
    return COMM_RX.search(name) is not None


def is_comm(g) -> bool:
    return g.cat == KERNEL and is_comm_name(g.name)


def union_length(starts: np.ndarray, ends: np.ndarray) -> float:
    """Length of the union of intervals [start, end) (touching intervals merge)."""
    if len(starts) == 0:
        return 0.0
    o = np.argsort(starts, kind="stable")
    s, e = starts[o], ends[o]
    run_end = np.maximum.accumulate(e)
    brk = np.empty(len(s), dtype=bool)
    brk[0] = True
    brk[1:] = s[1:] > run_end[:-1]
    idx = np.flatnonzero(brk)
    return float((np.maximum.reduceat(e, idx) - s[idx]).sum())


COMP, COMM, MCPY, MSET = 0, 1, 2, 3


def device_timeline(events) -> dict[str, float]:
    """The timeline of one device's GPU events (see the module docstring).

    Overlaps use |A ∩ B| = |A| + |B| - |A ∪ B|, so exposed comm = U(comp ∪ comm) - U(comp)
    and exposed memcpy = U(comp ∪ comm ∪ memcpy) - U(comp ∪ comm).
    """
    n = len(events)
    ts = np.fromiter((g.ts for g in events), dtype=np.float64, count=n)
    te = ts + np.fromiter((g.dur for g in events), dtype=np.float64, count=n)
    kind = np.fromiter((MCPY if g.cat == MEMCPY else MSET if g.cat == MEMSET else
                        COMM if is_comm(g) else COMP for g in events), dtype=np.int8, count=n)

    def U(*kinds):
        m = np.isin(kind, kinds)
        return union_length(ts[m], te[m])

    comp = U(COMP, MSET)
    comp_comm = U(COMP, MSET, COMM)
    busy = U(COMP, MSET, COMM, MCPY)
    total = float(te.max() - ts.min()) if n else 0.0
    return {
        "computation": comp,
        "exposed comm": comp_comm - comp,
        "exposed memcpy": busy - comp_comm,
        "idle": total - busy,
        "busy": busy,
        "total": total,
        "communication": U(COMM),
        "memcpy": U(MCPY),
        "memset": U(MSET),
    }


def gpu_timeline(tree, include_unlinked: bool = True) -> Sheet:
    by_dev: dict = {}
    for g in tree.gpu:
        if include_unlinked or g.launcher is not None:
            by_dev.setdefault(g.device, []).append(g)
    rows = []
    for dev in sorted(by_dev, key=str):
        t = device_timeline(by_dev[dev])
        for k, v in t.items():
            rows.append([dev, k, v / 1000.0, 100.0 * v / t["total"] if t["total"] else 0.0])
    notes = ["computation includes memsets; computation + exposed comm + exposed memcpy + idle = total"]
    if include_unlinked:
        n = sum(1 for g in tree.gpu if g.launcher is None)
        if n:
            notes.append(f"{n} GPU events have no CPU launch in the trace window; they are counted")
    return Sheet("gpu_timeline", ["device", "type", "time (ms)", "percent of total (%)"], rows,
                 {"time (ms)": "0.000", "percent of total (%)": PCT}, notes)
