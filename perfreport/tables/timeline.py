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
from perfreport.stats.order import sorted_unique
from perfreport.tables.columns import PCT
from perfreport.tables.gpu_arrays import stream_codes
from perfreport.tables.kernel_codes import event_codes, kinds
from perfreport.tables.launcher_codes import remembering_launchers, unlinked_count
from perfreport.tables.op_times import event_columns
from perfreport.tables.sheet import Sheet
from perfreport.tables import columns as C

COMM_RX = re.compile(r"nccl|rccl|all_?reduce|all_?gather|reduce_?scatter|alltoall", re.I)


@lru_cache(maxsize=None)
def is_comm_name(name: str) -> bool:
    return COMM_RX.search(name) is not None


def is_comm(g) -> bool:
    return g.cat == KERNEL and is_comm_name(g.name)


def union_length(starts: np.ndarray, ends: np.ndarray) -> float:
    """Length of the union of intervals [start, end) (touching intervals merge)."""
    n = len(starts)
    if n == 0:
        return 0.0
    if n > 1 and not (starts[1:] >= starts[:-1]).all():
        o = np.argsort(starts, kind="stable")
        starts, ends = starts[o], ends[o]
        del o
    # (already sorted, the usual case: tree.gpu is in ts order; no sorted copies needed)
    run_end = np.maximum.accumulate(ends)
    brk = np.empty(n, dtype=bool)
    brk[0] = True
    np.greater(starts[1:], run_end[:-1], out=brk[1:])
    idx = np.flatnonzero(brk)
    del brk, run_end
    return float((np.maximum.reduceat(ends, idx) - starts[idx]).sum())


COMP, COMM, MCPY, MSET = 0, 1, 2, 3


def _kind(g) -> int:
    c = g.cat
    return MCPY if c == MEMCPY else MSET if c == MEMSET else COMM if is_comm(g) else COMP


def device_timeline(events) -> dict[str, float]:
    """The timeline of one device's GPU events (see the module docstring)."""
    n = len(events)
    ts = np.fromiter((g.ts for g in events), dtype=np.float64, count=n)
    te = ts + np.fromiter((g.dur for g in events), dtype=np.float64, count=n)
    kind = np.fromiter(map(_kind, events), dtype=np.int8, count=n)
    return _timeline(ts, te, kind)


def _timeline(ts: np.ndarray, te: np.ndarray, kind: np.ndarray) -> dict[str, float]:
    """Overlaps use |A ∩ B| = |A| + |B| - |A ∪ B|, so exposed comm = U(comp ∪ comm) - U(comp)
    and exposed memcpy = U(comp ∪ comm ∪ memcpy) - U(comp ∪ comm)."""
    n = len(ts)
    present = set(sorted_unique(kind).tolist())

    def U(*kinds):
        if present <= set(kinds):  # every event: no masked copies
            return union_length(ts, te)
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
    # one pass over the events into flat arrays (device code, kind, start, end), then one
    # device at a time; no per-device lists of records
    gpu = tree.gpu
    n = len(gpu)
    sc = stream_codes(gpu) if include_unlinked else None
    if sc is not None:  # device codes from the ds column (numbered as the loop below numbers them)
        dev = sc[0]
        codes = {d: i for i, d in enumerate(sc[2])}
        del sc
    else:
        codes = {}
        code = codes.setdefault
        dev = np.fromiter(
            (code(g.device, len(codes)) if include_unlinked or g.launcher is not None else -1 for g in gpu),
            dtype=np.int32,
            count=n,
        )
    ts, te = event_columns(gpu, {"ts": "ts", "dur": "dur"})
    te += ts
    # the comm test is a regex on the name: once per distinct (name, category), from the codes
    # the other sheets read too (kernel_codes.event_codes)
    name_code, names = event_codes(gpu, "name")
    kind = kinds(gpu, name_code, len(names), _kind)
    del name_code, names
    rows = []
    for d in sorted(codes, key=str):
        k = codes[d]
        if len(codes) == 1 and (include_unlinked or (dev >= 0).all()):
            t = _timeline(ts, te, kind)
        else:
            m = dev == k
            t = _timeline(ts[m], te[m], kind[m])
            del m
        for key, v in t.items():
            rows.append([d, key, v / 1000.0, 100.0 * v / t["total"] if t["total"] else 0.0])
    del dev, ts, te, kind
    notes = ["computation includes memsets; computation + exposed comm + exposed memcpy + idle = total"]
    if include_unlinked:
        n = unlinked_count(gpu) if remembering_launchers(gpu) else sum(1 for g in gpu if g.launcher is None)
        if n:
            notes.append(f"{n} GPU events have no CPU launch in the trace window; they are counted")
    return Sheet(
        "gpu_timeline",
        [C.DEVICE, C.TYPE, C.TIME_MS, C.PERCENT_OF_TOTAL_PCT],
        rows,
        {C.TIME_MS: "0.000", C.PERCENT_OF_TOTAL_PCT: PCT},
        notes,
    )
