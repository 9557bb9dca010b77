"""Stage 2: nest CPU events per (pid, tid) and link GPU events to their launches.

Works on the reader's columns (:mod:`perfreport.read.kineto`): nesting is one numpy
``lexsort`` plus one tight loop, linking is ``searchsorted`` on correlation ids, and
:class:`Op` / :class:`GpuEvent` records are made only for what the report needs.

Linking, in order of preference:

1. ``correlation``: a GPU event's ``args.correlation`` equals the runtime call's. A graph
   launch (``cudaGraphLaunch`` / ``hipGraphLaunch``) owns every GPU event with its
   correlation (hundreds per launch).
2. ``ac2g`` flows, for GPU events without ``correlation``: the flow that ends on the GPU
   event (same pid, tid, ts) names the flow start, a runtime call at (pid, tid, ts).
3. ``External id``: a GPU event whose External id equals a cpu_op's is owned by that op
   (used only when the trace has no runtime event for it).

A GPU event none of these claim is *unlinked*: it stays in ``tree.gpu`` (and so in the
timeline) and is reported in its own rows.

What becomes a record (``tree.ops``), on a trace with GPU events: every runtime/driver call
that launched a GPU event, every event with a launched GPU event in its subtree (the
launching ops and all their ancestors), every ``user_annotation`` (and its ancestors).
Kernel-less ``cpu_op`` s (``aten::empty``, ``aten::view`` ...) and runtime calls that launch
nothing (``cudaFuncSetAttribute`` ...) carry no GPU time and are left out. Every CPU event
is kept when the trace has no GPU events (the CPU-only report needs them), when python
frames were asked for, and for graph-capture traces (``*StreamBeginCapture``: the capture's
kernel-less launch calls are the graph nodes). ``tree.n_events`` still counts every event.
"""
from __future__ import annotations

import gc
import re
from array import array

import numpy as np

from perfreport.events import NONE, SIDE, Columns, GpuEvent, Op
from perfreport.read import RawTrace
from perfreport.read.kineto import (C_CPU_OP, C_DRIVER, C_RUNTIME, C_USER_ANNOTATION, CATS,
                                    Collector)
from perfreport.tree.trace_tree import TraceTree

_CAPTURE = re.compile(r"(hip|cuda|cu)StreamBeginCapture")


def _trim() -> None:
    """Hand freed heap pages back to the OS (glibc only; a no-op elsewhere).

    The column buffers live on the C heap while the records live in Python's own arenas,
    so without this the freed columns would stay in the process's RSS next to the tree.
    """
    global _malloc_trim
    if _malloc_trim is None:
        try:
            import ctypes
            _malloc_trim = ctypes.CDLL("libc.so.6").malloc_trim
        except (OSError, AttributeError):
            _malloc_trim = False
    if _malloc_trim:
        _malloc_trim(0)


_malloc_trim = None


def _np(arr, dtype) -> np.ndarray:
    return np.frombuffer(arr, dtype=dtype) if len(arr) else np.zeros(0, dtype=dtype)


def build_tree(raw: RawTrace) -> TraceTree:
    gc_was = gc.isenabled()
    gc.disable()   # hundreds of thousands of new records: the cyclic GC only costs time here
    try:
        return _build(raw)
    finally:
        if gc_was:
            gc.enable()


def _build(raw: RawTrace) -> TraceTree:
    col: Collector = raw.records
    if col.consumed:
        raise ValueError("build_tree: this RawTrace was already consumed by an earlier build_tree")
    c, g = col.c, col.g
    n, ng = len(c), len(g)
    ts = _np(c.ts, np.float64)
    dur = _np(c.dur, np.float64)
    cat = _np(c.cat, np.int8)
    launch = (cat == C_RUNTIME) | (cat == C_DRIVER)

    order, parent = _nest(col, ts, dur, cat)
    lrow = _link(col, ts, cat, launch)

    if ng == 0 or col.keep_python or any(_CAPTURE.match(s) for s in col.names):
        keep = np.ones(n, dtype=bool)
    else:
        keep = np.zeros(n, dtype=bool)
        keep[lrow[lrow >= 0]] = True
        keep[cat == C_USER_ANNOTATION] = True
        front = np.flatnonzero(keep)
        while front.size:                      # close upwards: all ancestors of kept events
            p = parent[front]
            p = p[p >= 0]
            p = np.unique(p[~keep[p]])
            keep[p] = True
            front = p
    del launch

    rows = np.flatnonzero(keep)
    rows = rows[np.argsort(ts[rows], kind="stable")]     # uid order: by ts, then reading order
    uid_of = np.full(n, -1, dtype=np.int64)
    uid_of[rows] = np.arange(rows.size)
    ops = _make_ops(col, rows)
    linked = np.flatnonzero(lrow >= 0)
    l_uid = uid_of[lrow[linked]]
    l_cat = cat[lrow[linked]]
    # the CPU columns are not needed any more: free them before the lists are made
    del ts, dur, cat, c, rows
    col.release_cpu()
    _trim()

    # parents and children, in nesting order (per thread by ts, longer first)
    roots: list[Op] = []
    nest_rows = order[keep[order]]
    pr = parent[nest_rows]
    pu = np.where(pr >= 0, uid_of[pr], -1)
    # (memoryview iteration: one transient int at a time, no big lists between the records)
    for u, p in zip(memoryview(uid_of[nest_rows]), memoryview(pu)):
        o = ops[u]
        if p < 0:
            roots.append(o)
        else:
            po = ops[p]
            o.parent = po
            if po.children is None:
                po.children = [o]
            else:
                po.children.append(o)
    del nest_rows, order, keep, pr, pu

    del uid_of
    gobjs = _make_gpu(col)
    for gr, u, lc in zip(memoryview(linked), memoryview(l_uid), memoryview(l_cat)):
        ev = gobjs[gr]
        lo = ops[u]
        ev.launcher = lo
        if lo.kernels is None:
            lo.kernels = [ev]
        else:
            lo.kernels.append(ev)
        if lc == C_RUNTIME or lc == C_DRIVER:    # the launching op's direct kernels
            owner = lo.parent
            if owner is not None:
                if owner.kernels is None:
                    owner.kernels = [ev]
                else:
                    owner.kernels.append(ev)
    if ng:
        gts = _np(g.ts, np.float64)
        gobjs = [gobjs[i] for i in memoryview(np.argsort(gts, kind="stable"))]

    del parent, lrow, linked, l_uid, l_cat
    _trim()
    tree = TraceTree(raw.source, raw.meta, ops, gobjs, col.gpu_annotations, roots)
    tree.process_names = col.process_names
    tree.process_labels = col.process_labels
    tree.thread_names = col.thread_names
    tree.n_events = col.n_events
    return tree


def _nest(col: Collector, ts, dur, cat):
    """(nesting order, parent row per row or -1).

    Per (pid, tid), by ts with the longer event first at equal ts; an event's parent is
    the innermost open event that ends after it starts. Zero-length runtime calls never
    become parents.
    """
    n = ts.size
    thr = _np(col.c.thr, np.int32)
    order = np.lexsort((-dur, ts, thr))
    ends = (ts + dur)[order]
    push = ((dur > 0) | (cat != C_RUNTIME))[order].view(np.uint8)
    parent = np.full(n, -1, dtype=np.int64)
    par = memoryview(parent)
    stack_rows: list[int] = []
    stack_ends: list[float] = []
    cur = -1
    pop_r, pop_e = stack_rows.pop, stack_ends.pop
    for r, t, e, th, ok in zip(memoryview(order), memoryview(ts[order]), memoryview(ends),
                               memoryview(thr[order]), memoryview(push)):
        if th != cur:
            stack_rows.clear()
            stack_ends.clear()
            cur = th
        while stack_ends and stack_ends[-1] <= t:
            pop_r()
            pop_e()
        if stack_rows:
            par[r] = stack_rows[-1]
        if ok:
            stack_rows.append(r)
            stack_ends.append(e)
    return order, parent


def _last_match(keys: np.ndarray, rows: np.ndarray, want: np.ndarray) -> np.ndarray:
    """For each ``want``: the last (in ``rows`` order) row whose key equals it, or -1."""
    out = np.full(want.size, -1, dtype=np.int64)
    if not keys.size or not want.size:
        return out
    o = np.argsort(keys, kind="stable")
    ks, rs = keys[o], rows[o]
    i = np.searchsorted(ks, want, side="right") - 1
    ok = i >= 0
    ok[ok] = ks[i[ok]] == want[ok]
    out[ok] = rs[i[ok]]
    return out


def _link(col: Collector, ts, cat, launch) -> np.ndarray:
    """The launching CPU row of each GPU event (-1: unlinked)."""
    c, g = col.c, col.g
    ng = len(g)
    lrow = np.full(ng, -1, dtype=np.int64)
    if not ng or not ts.size:
        return lrow
    cs = _np(c.cs, np.int64)
    gcorr = _np(g.corr, np.int64)
    lr = np.flatnonzero(launch & (cs != NONE) & (cs != SIDE))
    has_corr = (gcorr != NONE) & (gcorr != SIDE)
    wi = np.flatnonzero(has_corr)
    lrow[wi] = _last_match(cs[lr], lr, gcorr[wi])
    side = np.flatnonzero(gcorr == SIDE)       # ids beyond int64 (kept as Python ints)
    if side.size:
        big = {}
        for (f, r), v in sorted(c.side.items(), key=lambda kv: kv[0][1]):
            if f == "cs" and launch[r]:
                big[v] = r
        for r in side.tolist():
            lrow[r] = big.get(g.side[("corr", r)], -1)
    corr_known = lrow >= 0       # ``g.correlation in by_corr``

    # 2. ac2g flows, for GPU events without correlation
    need = np.flatnonzero(~has_corr & (gcorr != SIDE))
    if need.size and len(col.flow_f):
        _link_flows(col, ts, launch, need, lrow)

    # 3. External id of a cpu_op / annotation
    gext = _np(g.ext, np.int64)
    need = np.flatnonzero((lrow < 0) & (gext != NONE) & (gext != SIDE) & ~corr_known)
    if need.size:
        ext = _np(c.ext, np.int64)
        er = np.flatnonzero(((cat == C_CPU_OP) | (cat == C_USER_ANNOTATION))
                            & (ext != NONE) & (ext != SIDE))
        lrow[need] = _last_match(ext[er], er, gext[need])
    return lrow


def _link_flows(col: Collector, ts, launch, need, lrow) -> None:
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


def _arr(typecode: str, a: np.ndarray) -> array:
    out = array(typecode)
    out.frombytes(np.ascontiguousarray(a).tobytes())
    return out


def _make_ops(col: Collector, rows: np.ndarray) -> list[Op]:
    """Records for ``rows`` (uid = position); their scalars go to one shared Columns."""
    c = col.c
    if not rows.size:
        return []
    cat = _np(c.cat, np.int8)[rows]
    launch = (cat == C_RUNTIME) | (cat == C_DRIVER)
    cs = _np(c.cs, np.int64)[rows]
    cols = Columns(ts=_arr("d", _np(c.ts, np.float64)[rows]),
                   dur=_arr("d", _np(c.dur, np.float64)[rows]),
                   thr=_arr("i", _np(c.thr, np.int32)[rows]),
                   corr=_arr("q", np.where(launch, cs, NONE)),
                   seq=_arr("q", np.where(launch, NONE, cs)),
                   ext=_arr("q", _np(c.ext, np.int64)[rows]))
    cols.threads = col.threads
    if c.side:
        uid_of = {r: u for u, r in enumerate(rows.tolist())}
        for (f, r), v in c.side.items():
            u = uid_of.get(r)
            if u is not None:
                if f == "cs":
                    f = "corr" if launch[u] else "seq"
                cols.side[(f, u)] = v
    names, table, cats = col.names, col.args_table + [None], CATS   # args index -1 -> None
    new = Op._from_columns
    return [new(u, names[nm], cats[ct], cols, table[a]) for u, (nm, ct, a) in enumerate(zip(
        memoryview(_np(c.name, np.int32)[rows]), memoryview(cat),
        memoryview(_np(c.args, np.int32)[rows])))]


def _make_gpu(col: Collector) -> list[GpuEvent]:
    """Records for every GPU event (uid = reading row); scalars stay in the reader's columns."""
    g = col.g
    if not len(g):
        return []
    cols = Columns(ts=g.ts, dur=g.dur, corr=g.corr, ext=g.ext, nbytes=g.nbytes)
    cols.side = g.side
    names, ds, cats = col.names, col.devstreams, CATS
    new = GpuEvent._from_columns
    out = []
    append = out.append
    for uid, (nm, ct, k) in enumerate(zip(g.name, g.cat, g.ds)):
        dev, stream = ds[k]
        append(new(uid, names[nm], cats[ct], dev, stream, cols))
    return out
