"""Stage 2: nest CPU events per (pid, tid) and link GPU events to their launches.

Works on the reader's columns (:mod:`perfreport.read.columns`, filled by
:mod:`perfreport.read.kineto`): nesting is one numpy ``lexsort`` plus one tight loop, linking
is ``searchsorted`` on correlation ids, and :class:`Op` / :class:`GpuEvent` records are made
only for what the report needs.

Before anything else, repeated events (the same event recorded twice) are dropped
(:mod:`perfreport.tree.dedup`, with a warning), and a cpu_op nested directly in a cpu_op of
the same name (``aten::div`` calling ``aten::div``) is merged into it: one call, one record.

Linking (:mod:`perfreport.tree.link`): by ``correlation`` (the innermost launch call of that
correlation wins, a graph launch owns all of its events), then ``ac2g`` flows, then
``External id``. Each linked event has one *owner*: the innermost enclosing event that is no
launch call (or, outside any op, the outermost launch call); the owner has it in its
``kernels``, exactly once. A GPU event none of these claim is *unlinked*: it stays in
``tree.gpu`` (and so in the timeline) and is reported in its own rows.

What becomes a record (``tree.ops``), on a trace with GPU events: every event with a
launched GPU event in its subtree (the launching ops and all their ancestors), every
``user_annotation`` (and its ancestors), and the runtime/driver calls that launched a GPU
event and are graph launches (``*GraphLaunch*``: graph-capture merging moves their events),
outside any op (they own their events in the report), or hold a kept event that is no
foldable launch call. Kernel-less ``cpu_op`` s (``aten::empty``, ``aten::view`` ...) and runtime
calls that launch nothing (``cudaFuncSetAttribute`` ...) carry no GPU time and are left out,
except the cpu_ops below an op named in :data:`KEEP_SUBTREES` (their shapes feed a pass).
Every CPU event is kept when the trace has no GPU events (the CPU-only report needs them),
when python frames were asked for, and for graph-capture traces (``*StreamBeginCapture``:
the capture's kernel-less launch calls are the graph nodes). ``tree.n_events`` still counts
every event.

The other launch calls (``cudaLaunchKernel`` inside an op, and any launch calls nested in
it such as ``cuLaunchKernel``: most of them) get no record:
their GPU events' ``launcher`` is the enclosing op, which has them in its ``kernels`` (as it
would as their owner anyway), and ``GpuEvent.launch_name`` keeps the call's name (a name
code in the GPU columns). ``GpuEvent.op``, ``Op.subtree_kernels`` and the tables read the
same either way. ``children`` and ``kernels`` are exact-size tuples (nothing appends to a
built tree's records; graph-capture merging replaces what it changes).
"""

from __future__ import annotations

import gc
import re
from array import array

import numpy as np

from perfreport.event_columns import compact
from perfreport.events import NONE, Columns, GpuEvent, Op, Sparse
from perfreport.read import RawTrace, heap
from perfreport.read.kineto import Collector
from perfreport.read.schema import C_CPU_OP, C_DRIVER, C_RUNTIME, C_USER_ANNOTATION, CATS
from perfreport.stats.order import sorted_unique
from perfreport.tree.dedup import drop_duplicates, duplicates_warning
from perfreport.tree.nest import nest_by_thread
from perfreport.tree.link import (
    chain_owner,
    foldable,
    graph_rows,
    link_rows,
    merge_same_name,
    merged_into,
    stream_exclusive,
)
from perfreport.tree.records import make_gpu, make_ops
from perfreport.tree.trace_tree import TraceTree

_CAPTURE = re.compile(r"(hip|cuda|cu)StreamBeginCapture")


# Ops whose kernel-less cpu_op descendants are kept on traces with GPU events: their children
# carry shapes the op itself does not take (passes/moe_meta.py reads the views of the expert
# weights and the routing op's top-k under vllm::moe_forward).
KEEP_SUBTREES = ("vllm::moe_forward", "vllm::moe_forward_shared")


def _keep_subtrees(col: Collector, keep, parent, cat, name) -> None:
    """Mark every cpu_op below a kept op named in :data:`KEEP_SUBTREES` (in place)."""
    codes = [i for i, s in enumerate(col.names) if s in KEEP_SUBTREES]
    if not codes:
        return
    mark = np.isin(name, codes) & keep
    if not mark.any():
        return
    child = (parent >= 0) & (cat == C_CPU_OP)
    up = np.where(child, parent, 0)
    while True:  # one pass per nesting level below the roots
        new = child & ~mark & mark[up]
        if not new.any():
            break
        mark |= new
    keep |= mark


def _trim() -> None:
    """Hand freed heap pages back to the OS (see :mod:`perfreport.read.heap`)."""
    heap.trim()


def _np(arr, dtype) -> np.ndarray:
    return np.frombuffer(arr, dtype=dtype) if len(arr) else np.zeros(0, dtype=dtype)


def build_tree(raw: RawTrace) -> TraceTree:
    gc_was = gc.isenabled()
    gc.disable()  # hundreds of thousands of new records: the cyclic GC only costs time here
    try:
        return _build(raw)
    finally:
        if gc_was:
            gc.enable()


def _build(raw: RawTrace) -> TraceTree:
    col: Collector = raw.records
    if col.consumed:
        raise ValueError("build_tree: this RawTrace was already consumed by an earlier build_tree")
    n_rows = len(col.c) + len(col.g)
    dup = duplicates_warning(*drop_duplicates(col), n_rows)
    c, g = col.c, col.g
    n, ng = len(c), len(g)
    ts = _np(c.ts, np.float64)
    dur = _np(c.dur, np.float64)
    cat = _np(c.cat, np.int8)
    name = _np(c.name, np.int32)
    launch = (cat == C_RUNTIME) | (cat == C_DRIVER)
    graph = graph_rows(col, launch, name)

    order, parent = nest_by_thread(_np(col.c.thr, np.int32), ts, dur, cat)
    same, parent, rep = merge_same_name(cat, name, parent)
    lrow = link_rows(col, ts, cat, launch, parent, graph)
    if rep is not None:  # External id links to a merged op: its call
        merged_into(rep, lrow)
    del rep

    fold = None
    if ng == 0 or col.keep_python or any(_CAPTURE.match(s) for s in col.names):
        keep = ~same
    else:
        keep = np.zeros(n, dtype=bool)
        keep[lrow[lrow >= 0]] = True
        keep[cat == C_USER_ANNOTATION] = True
        front = np.flatnonzero(keep)
        while front.size:  # close upwards: all ancestors of kept events
            p = parent[front]
            p = p[p >= 0]
            p = sorted_unique(p[~keep[p]])
            keep[p] = True
            front = p
        _keep_subtrees(col, keep, parent, cat, name)
        fold = foldable(keep, launch, parent, graph)
        keep &= ~fold
    del same, graph

    rows = np.flatnonzero(keep)
    rows = rows[np.argsort(ts[rows], kind="stable")]  # uid order: by ts, then reading order
    uid_of = np.full(n, -1, dtype=np.int32)  # row indices and uids fit int32 (2^31 events)
    uid_of[rows] = np.arange(rows.size, dtype=np.int32)

    # nesting, in nesting order (per thread by ts, longer first): child uid, parent uid
    nest_rows = order[keep[order]]
    del order, keep
    pr = parent[nest_rows]
    n_uid = uid_of[nest_rows]
    p_uid = np.where(pr >= 0, uid_of[pr], -1)
    del nest_rows, pr

    # links: each linked GPU row's launcher uid (its launch call's record, or the owner when
    # the call was folded) and its owner's uid when that is another record, else -1
    linked = np.flatnonzero(lrow >= 0)
    lr = lrow[linked]
    del lrow
    l_launch = launch[lr]
    lname = np.full(ng, -1, dtype=np.int32)
    lname[linked[l_launch]] = name[lr[l_launch]]
    # the launch call's own start and duration (NaN: linked by External id, no call record)
    lts = np.full(ng, np.nan)
    ldur = np.full(ng, np.nan)
    lts[linked[l_launch]] = ts[lr[l_launch]]
    ldur[linked[l_launch]] = dur[lr[l_launch]]
    own = chain_owner(lr, launch, parent)
    lrec = np.where(fold[lr], own, lr) if fold is not None else lr
    t_uid = uid_of[lrec]
    s_uid = np.where(own != lrec, uid_of[own], -1)
    del lr, own, lrec, l_launch, fold, parent, uid_of, ts, dur, cat, launch, name, c
    cols, codes = _op_columns(col, rows)  # last: the row-length arrays above are gone
    del rows
    # the CPU columns are not needed any more: free them before the records are made
    col.release_cpu()
    _trim()

    # one int object per uid, shared by the op and the GPU event with that uid
    ints = list(range(max(codes[0].size, ng)))
    ops = _make_ops(col, cols, codes, ints)
    del codes
    roots = _nest_records(ops, n_uid, p_uid)
    del n_uid, p_uid
    gobjs = _make_gpu(col, lname, ints, lts, ldur)
    del lname, ints, lts, ldur
    _link_records(ops, gobjs, linked, t_uid, s_uid)
    del linked, t_uid, s_uid
    comm = {gobjs[row].uid: a for row, a in col.gpu_comm.items()}  # rows -> records, before the sort
    if ng:
        gts = _np(g.ts, np.float64)
        gobjs = [gobjs[i] for i in memoryview(np.argsort(gts, kind="stable"))]
        del gts
    _trim()
    tree = TraceTree(raw.source, raw.meta, ops, gobjs, col.gpu_annotations, roots)
    tree.process_names = col.process_names
    tree.process_labels = col.process_labels
    tree.thread_names = col.thread_names
    tree.n_events = col.n_events
    tree.gpu_comm_args = comm
    if dup:
        tree.warnings.append(dup)
    return tree


def _arr(typecode: str, a: np.ndarray) -> array:
    out = array(typecode)
    out.frombytes(np.ascontiguousarray(a).tobytes())
    return out


def _op_columns(col: Collector, rows: np.ndarray):
    """The shared Columns of the records for ``rows`` (uid = position) and their
    (name, category, args) codes, copied out of the CPU columns so those can be freed."""
    c = col.c
    cat = _np(c.cat, np.int8)[rows]
    cols = Columns(
        ts=_arr("d", _np(c.ts, np.float64)[rows]),
        dur=_arr("d", _np(c.dur, np.float64)[rows]),
        thr=_arr("i", _np(c.thr, np.int32)[rows]),
        cs=compact(_arr("q", _np(c.cs, np.int64)[rows])),  # correlation of launch calls, else seq (Op reads by cat)
        ext=compact(_arr("q", _np(c.ext, np.int64)[rows])),
    )
    cols.threads = col.threads
    if c.side:
        uid_of = {r: u for u, r in enumerate(rows.tolist())}
        for (f, r), v in c.side.items():
            u = uid_of.get(r)
            if u is not None:
                cols.side[(f, u)] = v
    return cols, (_np(c.name, np.int32)[rows], cat, _np(c.args, np.int32)[rows])


def _make_ops(col: Collector, cols: Columns, codes, ints: list) -> list[Op]:
    """The records (uid = position; ``ints`` supplies the uid objects, shared with the GPU
    events); their scalars live in ``cols``."""
    name, cat, args = codes
    if not name.size:
        return []
    cols.args = _arr("i", args)  # into args_table; -1 (none) reads its last entry, None
    cols.args_table = col.args_table + [None]
    return make_ops(ints, _arr("i", name), memoryview(cat), col.names, CATS, cols)  # (names by uid)


def _groups(keys: np.ndarray):
    """(key, start, end) of the runs of equal values in sorted ``keys``, as memoryviews."""
    starts = np.flatnonzero(np.concatenate(([True], keys[1:] != keys[:-1])))
    ends = np.append(starts[1:], keys.size)
    return zip(memoryview(keys[starts]), memoryview(starts), memoryview(ends))


def _nest_records(ops: list[Op], n_uid: np.ndarray, p_uid: np.ndarray) -> list[Op]:
    """Set ``parent`` / ``children`` (tuples, in nesting order); return the roots."""
    roots = [ops[u] for u in memoryview(n_uid[p_uid < 0])]
    m = p_uid >= 0
    cu, cp = n_uid[m], p_uid[m]
    if not cp.size:
        return roots
    o = np.argsort(cp, kind="stable")  # by parent, nesting order within one parent
    cu, cp = cu[o], cp[o]
    del o, m
    kids = [ops[u] for u in memoryview(cu)]
    for p, a, b in _groups(cp):
        po = ops[p]
        if b - a == 1:  # a lone child in the slot itself (Op.children makes the tuple)
            k = po._ch = kids[a]
            k.parent = po
            continue
        ch = po._ch = tuple(kids[a:b])
        for k in ch:
            k.parent = po
    return roots


def _link_records(ops: list[Op], gobjs: list[GpuEvent], linked, t_uid, s_uid) -> None:
    """``launcher`` of each linked GPU event, and the ``kernels`` lists (GPU row order)."""
    if not linked.size:
        return
    for gr, u in zip(memoryview(linked), memoryview(t_uid)):
        gobjs[gr].launcher = ops[u]
    m = s_uid >= 0
    owner = np.concatenate((t_uid, s_uid[m]))
    grs = np.concatenate((linked, linked[m]))
    o = np.lexsort((grs, owner))
    owner, grs = owner[o], grs[o]
    del o, m
    kl = tuple([gobjs[x] for x in memoryview(grs)])
    for p, a, b in _groups(owner):
        # an exact-size tuple; a lone kernel in the slot itself (Op.kernels makes the tuple)
        ops[p]._k = kl[a] if b - a == 1 else kl[a:b]


def _make_gpu(col: Collector, lname: np.ndarray, ints: list, lts=None, ldur=None) -> list[GpuEvent]:
    """Records for every GPU event (uid = reading row); scalars stay in the reader's columns."""
    g = col.g
    if not len(g):
        return []
    ng = len(g)
    ds = _np(g.ds, np.int32)
    dur = _np(g.dur, np.float64)
    excl = stream_exclusive(ds, _np(g.ts, np.float64), dur)
    diff = np.flatnonzero(excl != dur)  # stream time differs from dur only where events overlap
    if diff.size * SPARSE < ng:  # dur but where overlapped
        excl = Sparse(g.dur, ng, zip(diff.tolist(), excl[diff].tolist()))
    else:
        excl = _arr("d", excl)
    cols = Columns(
        ts=g.ts,
        dur=g.dur,
        corr=compact(g.corr),
        ext=compact(g.ext),
        nbytes=compact(_sparse(g.nbytes, NONE)),
        lname=_arr("i", lname),
        excl=excl,
        ds=g.ds,
    )
    cols.lts = _arr("d", lts) if lts is not None else None
    cols.ldur = _arr("d", ldur) if ldur is not None else None
    del excl, diff, dur, ds
    cols.side = g.side
    cols.names = col.names
    cols.devstreams = col.devstreams
    return make_gpu(ints, g.name, g.cat, col.names, CATS, cols)


SPARSE = 32  # a dict entry and its int objects cost ~ this many array rows (8 bytes each)


def _sparse(column: array, default: int):
    """``column`` as a :class:`~perfreport.events.Sparse` column when under 1 / SPARSE of its
    rows differ from ``default`` (GPU ``bytes``: memcpy and memset only), else as is."""
    a = _np(column, np.int64)
    rows = np.flatnonzero(a != default)
    if rows.size * SPARSE >= a.size:
        return column
    return Sparse(default, a.size, zip(rows.tolist(), a[rows].tolist()))
