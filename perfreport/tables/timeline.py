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

import pandas as pd

from perfreport.events import KERNEL, MEMCPY, MEMSET
from perfreport.tables.sheet import PCT, Sheet

COMM_RX = re.compile(r"nccl|rccl|all_?reduce|all_?gather|reduce_?scatter|alltoall", re.I)


@lru_cache(maxsize=None)
def is_comm_name(name: str) -> bool:
    return COMM_RX.search(name) is not None


def is_comm(g) -> bool:
    return g.cat == KERNEL and is_comm_name(g.name)


def union(iv: list[tuple[float, float]]) -> list[tuple[float, float]]:
    iv = sorted(iv)
    out: list[list[float]] = []
    for s, e in iv:
        if out and s <= out[-1][1]:
            if e > out[-1][1]:
                out[-1][1] = e
        else:
            out.append([s, e])
    return [(s, e) for s, e in out]


def length(iv) -> float:
    return sum(e - s for s, e in iv)


def intersect(a, b) -> list[tuple[float, float]]:
    """Intersection of two sorted disjoint interval lists."""
    i = j = 0
    out = []
    while i < len(a) and j < len(b):
        s = max(a[i][0], b[j][0])
        e = min(a[i][1], b[j][1])
        if s < e:
            out.append((s, e))
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return out


def device_timeline(events) -> dict[str, float]:
    comp, comm, mcpy, mset = [], [], [], []
    lo, hi = float("inf"), float("-inf")
    for g in events:
        iv = (g.ts, g.ts + g.dur)
        lo = min(lo, iv[0])
        hi = max(hi, iv[1])
        if g.cat == MEMCPY:
            mcpy.append(iv)
        elif g.cat == MEMSET:
            mset.append(iv)
            comp.append(iv)
        elif is_comm(g):
            comm.append(iv)
        else:
            comp.append(iv)
    u_comp, u_comm, u_mcpy = union(comp), union(comm), union(mcpy)
    t_comp, t_comm, t_mcpy = length(u_comp), length(u_comm), length(u_mcpy)
    exp_comm = t_comm - length(intersect(u_comm, u_comp))
    comp_comm = union(u_comp + u_comm)
    exp_mcpy = t_mcpy - length(intersect(u_mcpy, comp_comm))
    busy = length(union(comp_comm + u_mcpy))
    total = hi - lo if events else 0.0
    return {
        "computation": t_comp,
        "exposed comm": exp_comm,
        "exposed memcpy": exp_mcpy,
        "idle": total - busy,
        "busy": busy,
        "total": total,
        "communication": t_comm,
        "memcpy": t_mcpy,
        "memset": length(union(mset)),
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
            rows.append({"device": dev, "type": k, "time (ms)": v / 1000.0,
                         "percent of total (%)": 100.0 * v / t["total"] if t["total"] else 0.0})
    df = pd.DataFrame(rows, columns=["device", "type", "time (ms)", "percent of total (%)"])
    notes = ["computation includes memsets; computation + exposed comm + exposed memcpy + idle = total"]
    if include_unlinked:
        n = sum(1 for g in tree.gpu if g.launcher is None)
        if n:
            notes.append(f"{n} GPU events have no CPU launch in the trace window; they are counted")
    return Sheet("gpu_timeline", df, {"time (ms)": "0.000", "percent of total (%)": PCT}, notes)
