"""Linking GPU events to CPU launches, on the reader's columns (numpy, one pass each).

Rules (defined for every nesting of runtime and driver calls on a thread):

* **Launch call.** Among the runtime/driver calls carrying a GPU event's ``correlation``, a
  graph launch (``*GraphLaunch*``) wins (it owns every event of its correlation, nested or
  not); otherwise the *innermost* call wins (``cudaLaunchKernel`` enclosing
  ``cuLaunchKernel`` with the same correlation, as CUPTI records when both APIs are traced:
  the driver call launched it). Ties: the last one read.
* **Owner.** The event belongs to the innermost CPU event enclosing its launch call that is
  not itself a launch call (a cpu_op, annotation or python frame): an enclosing launch call
  of the same or another correlation is never a second launcher. A launch call outside any
  op is owned by the outermost launch call around it (the call the program made).
* **Fallbacks** for events without a correlation: ``ac2g`` flows, then ``External id``.

:func:`stream_exclusive` gives each GPU event its time on its (device, stream) with
same-stream overlap counted once, the time the op tables sum.
"""

from __future__ import annotations

import numpy as np

from perfreport.events import NONE, SIDE
from perfreport.read.kineto import Collector
from perfreport.read.schema import C_CPU_OP, C_USER_ANNOTATION
from perfreport.stats.order import sorted_unique


def _np(arr, dtype) -> np.ndarray:
    return np.frombuffer(arr, dtype=dtype) if len(arr) else np.zeros(0, dtype=dtype)


def graph_rows(col: Collector, launch: np.ndarray, name: np.ndarray) -> np.ndarray:
    """Mask of the graph-launch calls (``cudaGraphLaunch``, ``hipGraphLaunch``, ...)."""
    codes = [i for i, s in enumerate(col.names) if "GraphLaunch" in s]
    if not codes:
        return np.zeros(launch.size, dtype=bool)
    return launch & np.isin(name, codes)


def depth_of(rows: np.ndarray, parent: np.ndarray) -> np.ndarray:
    """Nesting depth of ``rows`` (0: a root)."""
    d = np.zeros(rows.size, dtype=np.int64)
    p = parent[rows]
    live = np.flatnonzero(p >= 0)
    while live.size:
        d[live] += 1
        p[live] = parent[p[live]]
        live = live[p[live] >= 0]
    return d


def chain_owner(rows: np.ndarray, launch: np.ndarray, parent: np.ndarray) -> np.ndarray:
    """For each row: itself when it is no launch call, else the first enclosing event that
    is no launch call, else the outermost launch call around it."""
    own = rows.copy()
    idx = np.flatnonzero(launch[own] & (parent[own] >= 0))
    while idx.size:
        own[idx] = parent[own[idx]]
        idx = idx[launch[own[idx]] & (parent[own[idx]] >= 0)]
    return own


CHUNK = 1 << 16  # rows per step of the row-wise passes below (bounds their temporaries)


def merge_same_name(cat: np.ndarray, name: np.ndarray, parent: np.ndarray):
    """cpu_ops nested directly in a cpu_op of the same name (``aten::div`` calling
    ``aten::div``) are one call: (mask of the inner rows, ``parent`` with them skipped --
    updated in place --, and (the inner rows, the row each merges into) or None when nothing
    merges). Row-wise in chunks: no temporary of the trace's length."""
    n = parent.size
    same = np.zeros(n, dtype=bool)
    for a in range(0, n, CHUNK):
        pp = parent[a : a + CHUNK]
        r = np.flatnonzero((cat[a : a + CHUNK] == C_CPU_OP) & (pp >= 0))
        p = pp[r]
        r += a
        same[r[(cat[p] == C_CPU_OP) & (name[p] == name[r])]] = True
    rows = np.flatnonzero(same)
    if not rows.size:
        return same, parent, None
    into = parent[rows].astype(np.int64)
    sel = np.flatnonzero(same[into])
    while sel.size:  # a chain of same-name calls merges into its outermost
        into[sel] = parent[into[sel]]
        sel = sel[same[into[sel]]]
    for a in range(0, n, CHUNK):  # children of merged rows: to the row they merged into
        pp = parent[a : a + CHUNK]
        k = np.flatnonzero(pp >= 0)
        k = k[same[pp[k]]]
        pp[k] = into[np.searchsorted(rows, pp[k])]
    return same, parent, (rows, into)


def merged_into(rep, r: np.ndarray) -> np.ndarray:
    """``r`` (rows, -1 for none) with each merged row replaced by the row it merged into
    (``rep`` from :func:`merge_same_name`), in place."""
    rows, into = rep
    pos = np.searchsorted(rows, r)
    np.minimum(pos, rows.size - 1, out=pos)
    hit = (r >= 0) & (rows[pos] == r)
    r[hit] = into[pos[hit]]
    return r


def _last_match(keys: np.ndarray, rows: np.ndarray, want: np.ndarray, order: np.ndarray | None = None) -> np.ndarray:
    """For each ``want``: the last row (in ``order``, default ``rows`` order) whose key
    equals it, or -1. ``order`` must sort ``keys``."""
    out = np.full(want.size, -1, dtype=np.int64)
    if not keys.size or not want.size:
        return out
    o = np.argsort(keys, kind="stable") if order is None else order
    ks, rs = keys[o], rows[o]
    i = np.searchsorted(ks, want, side="right") - 1
    ok = i >= 0
    ok[ok] = ks[i[ok]] == want[ok]
    out[ok] = rs[i[ok]]
    return out


def link_rows(col: Collector, ts, cat, launch, parent, graph) -> np.ndarray:
    """The launch row (a runtime/driver call, or a cpu_op for External id links) of each
    GPU event, -1: unlinked (see the module docstring)."""
    c, g = col.c, col.g
    ng = len(g)
    lrow = np.full(ng, -1, dtype=np.int64)
    if not ng or not ts.size:
        return lrow
    cs = _np(c.cs, np.int64)
    gcorr = _np(g.corr, np.int64)
    lr = np.flatnonzero(launch & (cs != NONE) & (cs != SIDE))
    keys = cs[lr]
    # preference among calls of one correlation: graph launch, then depth, then reading order
    dep = np.zeros(lr.size, dtype=np.int64)
    ks = np.sort(keys)
    rep = ks[1:] == ks[:-1]
    if rep.any():
        multi = np.isin(keys, ks[1:][rep])
        dep[multi] = depth_of(lr[multi], parent)
        del multi
    del ks, rep
    order = np.lexsort((lr, dep, graph[lr], keys))
    del dep
    keys, lr = keys[order], lr[order]  # sorted by correlation, the preferred call last
    del order
    has_corr = (gcorr != NONE) & (gcorr != SIDE)
    for a in range(0, ng, CHUNK):  # the last call of each event's correlation
        w = np.flatnonzero(has_corr[a : a + CHUNK])
        want = gcorr[a : a + CHUNK][w]
        i = np.searchsorted(keys, want, side="right") - 1
        ok = i >= 0
        ok[ok] = keys[i[ok]] == want[ok]
        lrow[w[ok] + a] = lr[i[ok]]
    del keys, lr
    side = np.flatnonzero(gcorr == SIDE)  # ids beyond int64 (kept as Python ints)
    if side.size:
        big = {}
        for (f, r), v in sorted(c.side.items(), key=lambda kv: kv[0][1]):
            if f == "cs" and launch[r]:
                big[v] = r
        for r in side.tolist():
            lrow[r] = big.get(g.side[("corr", r)], -1)
    corr_known = lrow >= 0

    # ac2g flows, for GPU events without correlation
    need = np.flatnonzero(~has_corr & (gcorr != SIDE))
    if need.size and len(col.flow_f):
        _link_flows(col, launch, need, lrow)

    # External id of a cpu_op / annotation
    gext = _np(g.ext, np.int64)
    need = np.flatnonzero((lrow < 0) & (gext != NONE) & (gext != SIDE) & ~corr_known)
    if need.size:
        want = gext[need]
        er = _rows_with(_np(c.ext, np.int64), cat, sorted_unique(want))
        lrow[need] = _last_match(_np(c.ext, np.int64)[er], er, want)
    return lrow


def _rows_with(ext: np.ndarray, cat: np.ndarray, ids: np.ndarray) -> np.ndarray:
    """The cpu_op / annotation rows whose External id is one of ``ids`` (sorted, no
    NONE/SIDE), in row order: the only rows an External id link can pick."""
    out = []
    for a in range(0, ext.size, CHUNK):
        e = ext[a : a + CHUNK]
        pos = np.searchsorted(ids, e)
        np.minimum(pos, ids.size - 1, out=pos)
        c = cat[a : a + CHUNK]
        hit = np.flatnonzero((ids[pos] == e) & ((c == C_CPU_OP) | (c == C_USER_ANNOTATION)))
        out.append(hit + a)
    return np.concatenate(out) if out else np.zeros(0, dtype=np.int64)


def _link_flows(col: Collector, launch, need, lrow) -> None:
    locs = col.locations
    fe, fs = col.flow_f, col.flow_s
    flows_end = {(*locs[l], t): i for i, l, t in zip(fe.id, fe.loc, fe.ts)}
    flows_start = {i: (*locs[l], t) for i, l, t in zip(fs.id, fs.loc, fs.ts)}
    threads = col.threads
    c = col.c
    by_start = {(*threads[c.thr[r]], c.ts[r]): r for r in np.flatnonzero(launch).tolist()}
    g = col.g
    for r in need.tolist():
        dev, stream = col.devstreams[g.ds[r]]
        fid = flows_end.get((dev, stream, g.ts[r]))
        st = flows_start.get(fid) if fid is not None else None
        hit = by_start.get(st) if st is not None else None
        if hit is not None:
            lrow[r] = hit


def foldable(keep, launch, parent, graph) -> np.ndarray:
    """Kept launch calls that need no record of their own: inside an op (through any
    launch calls around them), no graph launch, and nothing that stays a record nested in
    them. Their GPU events are linked straight to the owning op."""
    rows = np.flatnonzero(keep & launch & ~graph)
    own = chain_owner(rows, launch, parent)
    cand = np.zeros(keep.size, dtype=bool)
    cand[rows[~launch[own]]] = True
    kids = np.flatnonzero(keep & ~cand & (parent >= 0))
    front = sorted_unique(parent[kids])
    front = front[cand[front]]
    while front.size:  # a record inside: it and the calls around it stay
        cand[front] = False
        p = parent[front]
        p = p[p >= 0]
        front = sorted_unique(p[cand[p]])
    return cand


def stream_exclusive(ds: np.ndarray, ts: np.ndarray, dur: np.ndarray) -> np.ndarray:
    """Each event's time on its stream with same-stream overlap counted once.

    Per stream (``ds`` code) by start time: an event's exclusive time is the part of
    [ts, ts + dur) after the latest end of the events that started before it (programmatic
    dependent launch lets a kernel start before the previous one ends); the overlapped part
    is charged to the earlier event. So the exclusive times of one stream sum to the length
    of the union of its events, and an op's sum never exceeds its kernels' wall span.
    Events that overlap nothing keep their ``dur`` exactly.
    """
    n = ts.size
    out = dur.astype(np.float64, copy=True)
    if n < 2:
        return out
    ts = ts - ts.min()  # relative: absolute µs near 1e15 keep no sub-µs digits in ts + dur
    o = np.lexsort((ts, ds))
    dso, tso, eo = ds[o], ts[o], (ts + dur)[o]
    starts = np.flatnonzero(np.concatenate(([True], dso[1:] != dso[:-1])))
    ends = np.append(starts[1:], n)
    for a, b in zip(starts.tolist(), ends.tolist()):
        if b - a < 2:
            continue
        e = eo[a:b]
        prev = np.maximum.accumulate(e)[:-1]  # latest end before each event (from the 2nd)
        t = tso[a + 1 : b]
        hit = np.flatnonzero(prev > t)
        if hit.size:
            rows = o[a + 1 : b][hit]
            out[rows] = np.maximum(0.0, e[1:][hit] - prev[hit])
    return out
