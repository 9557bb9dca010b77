"""Per-op kernel times: direct (launched by the op's own launch calls) and subtree.

A GPU event's time here is its :attr:`~perfreport.events.GpuEvent.stream_time`: where kernels
on one stream overlap (programmatic dependent launch), the overlap is counted once, so an
op's time never exceeds its kernels' wall span and the times of all ops still add up to the
GPU time of the trace.
"""

from __future__ import annotations

from array import array
from contextlib import contextmanager

import numpy as np

from perfreport.events import CPU_OP, DRIVER, RUNTIME, Op

LAUNCH = (RUNTIME, DRIVER)


def kernel_time(kernels) -> float:
    """Σ stream time of ``kernels`` (µs), added one by one in order (gathered at once)."""
    if not kernels:
        return 0.0
    (st,) = event_columns(kernels, {"stream_time": "excl"})
    return sum(st.tolist())


# id(events) -> _Shared of the event lists :func:`shared` holds (tree.gpu while build_tables runs)
_SHARED: dict = {}


class _Shared:
    """What every table would otherwise recompute from one event list: its records' common
    columns (``src``, None where not all read from one), their uids, and Σ stream time."""

    __slots__ = ("events", "src", "uid", "total", "memo", "kept")

    def __init__(self, events, src_uid=None) -> None:
        self.events = events
        self.src, self.uid = _uids(events) if src_uid is None else src_uid
        self.total: float | None = None
        self.memo: dict | None = {}  # what :func:`remembered` made (None once forgotten)
        self.kept: dict = {}  # what forget_uids kept of it


def _uids(events):
    """``(columns, uid int array)`` when every one of ``events`` reads from one
    :class:`~perfreport.events.Columns`, else ``(None, None)``. A list comprehension per chunk
    of events (slot reads ~3x faster than ``map(attrgetter)`` into ``np.fromiter``; the chunks
    bound the list it makes: 512 KB)."""
    n = len(events)
    src = events[0]._src if n else None
    if not n or src.__class__ is tuple:
        return None, None
    uid = np.empty(n, dtype=np.intp)
    for a in range(0, n, CHUNK):
        part = [e.uid for e in events[a : a + CHUNK] if e._src is src]
        if len(part) != min(CHUNK, n - a):  # (one reads from elsewhere)
            return None, None
        uid[a : a + len(part)] = part
    return src, uid


CHUNK = 1 << 16  # records per list of values read at once (8 bytes a value)


@contextmanager
def shared(events, src_uid=None):
    """While open, :func:`event_columns`, :func:`gpu_time`, :func:`shared_uids` and
    :func:`remembered` on ``events`` (the same list object) reuse one uid gather, one Σ and
    what was remembered (the tables ask for them a dozen times; a 105 MB trace: ~0.3 CPU s).
    ``src_uid``: the list's ``(columns, uids)`` when the caller has them (a subset of a shared
    list: its uids by a numpy gather, no pass over the records). Closed, nothing is kept: a
    list changed later is read afresh. Nested opens of one list keep the outer one's."""
    k = id(events)
    if _shared_of(events) is not None:
        yield
        return
    _SHARED[k] = _Shared(events, src_uid)
    try:
        yield
    finally:
        _SHARED.pop(k, None)


def _shared_of(events):
    s = _SHARED.get(id(events))
    return s if s is not None and s.events is events else None


def shared_uids(events):
    """``(columns, uids)`` of ``events`` as :func:`_uids` gives them (shared while
    :func:`shared` holds the list and :func:`forget_uids` has not dropped them)."""
    s = _shared_of(events)
    return (s.src, s.uid) if s is not None and s.uid is not None else _uids(events)


def forget_uids(events, keep=()) -> None:
    """Drop the uid array :func:`shared` holds for ``events`` (8 bytes per event) and what
    :func:`remembered` made, keeping Σ stream time and the remembered values under the keys
    ``keep``: for the tables that no longer read the list's columns (the perf sheets' peak,
    the run's, stays where it was without the sharing). Nothing more is remembered after."""
    s = _shared_of(events)
    if s is not None:
        if s.total is None:
            gpu_time_of(events)
        kept = {k: s.memo[k] for k in keep if s.memo is not None and k in s.memo}
        s.src = s.uid = s.memo = None
        s.kept = kept


_MISSING = object()


def release(events, key) -> None:
    """Forget what :func:`remembered` holds under ``key`` for ``events`` (its last reader has it)."""
    s = _shared_of(events)
    if s is not None:
        s.kept.pop(key, None)
        if s.memo is not None:
            s.memo.pop(key, None)


def remembering(events) -> bool:
    """Whether :func:`remembered` keeps what it makes for ``events`` (shared, not forgotten)."""
    s = _shared_of(events)
    return s is not None and s.memo is not None


def remembered(events, key, make):
    """``make()``, made once per ``key`` while :func:`shared` holds ``events`` (and
    :func:`forget_uids` has not dropped what it held); else made afresh on every call. The
    value is shared by every caller: treat it as read-only."""
    s = _shared_of(events)
    if s is None:
        return make()
    if s.memo is None:
        v = s.kept.get(key, _MISSING)
        return make() if v is _MISSING else v
    v = s.memo.get(key, _MISSING)
    if v is _MISSING:
        v = make()
        if v is not None:  # (None: nothing made, nothing kept)
            s.memo[key] = v
    return v


def gpu_time(tree) -> float:
    """Σ stream time of every GPU event of the trace (µs): what the op tables add up to (the
    stream times gathered at once, added one by one in order as :func:`kernel_time` does)."""
    return gpu_time_of(tree.gpu)


def gpu_time_of(events) -> float:
    """:func:`gpu_time` of the event list ``events`` (kept while :func:`shared` holds it)."""
    s = _shared_of(events)
    if s is not None and s.total is not None:
        return s.total
    (st,) = event_columns(events, {"stream_time": "excl"})
    t = sum(st.tolist()) if len(st) else 0.0
    if s is not None:
        s.total = t
    return t


def event_columns(events, fields: dict) -> list:
    """``[float64 array of attribute a of each of events, for a in fields]``; ``fields`` maps
    an attribute of :class:`~perfreport.events.GpuEvent` to the tree's column that holds it.
    Gathered from the shared columns when every event reads from them (the usual case), else
    read one by one (records made outside the tree build: tests, graph-capture clones)."""
    n = len(events)
    src = events[0]._src if n else None
    if n and src.__class__ is not tuple and all(getattr(src, c, None) is not None for c in fields.values()):
        src, uid = shared_uids(events)
        if uid is not None:
            return [np.asarray(getattr(src, c), dtype=np.float64)[uid] for c in fields.values()]
    return [np.fromiter((getattr(g, a) for g in events), dtype=np.float64, count=n) for a in fields]


def owns(o) -> bool:
    """Whether ``o``'s ``kernels`` are its own direct kernels (an op, or a launch call
    outside any op); a launch call inside another event only lists what it launched."""
    return o.cat not in LAUNCH or o.parent is None


CPU, IN_LAUNCH, OTHER = 0, 1, 2  # OpTimes.kind: a cpu_op, a launch call, another event
_KIND = {CPU_OP: CPU, RUNTIME: IN_LAUNCH, DRIVER: IN_LAUNCH}


class OpTimes:
    """``direct[uid]`` and ``subtree[uid]`` kernel time in µs, for every CPU event.

    ``subtree`` adds the children's subtree times to the op's own direct time; a launch call
    inside an op contributes only what is nested in it (its kernels are its owner's).
    """

    def __init__(self, tree):
        # uids index the arrays; after --steps (perfreport.tree.steps.restrict) they have holes
        ops = tree.ops
        # (int32 index arrays here: 4 bytes an op or kernel; uids below 2^31, as the tree's)
        self.src, uid = _uids(ops)
        uid = np.array([o.uid for o in ops], dtype=np.int32) if uid is None else uid.astype(np.int32)
        self.uid = uid  # (each op's, in tree.ops order; read by op_rows)
        n = int(uid.max()) + 1 if uid.size else 0
        # direct: every op's kernels end to end, summed per op by np.bincount (in order, as
        # kernel_time adds them)
        lens, flat = Op.kernels_of(ops)
        lens = np.array(lens, dtype=np.int32)
        owner = np.repeat(uid, lens)
        ksrc, kuid = _uids(flat)
        if kuid is not None and getattr(ksrc, "excl", None) is not None:
            st = np.asarray(ksrc.excl, dtype=np.float64)[kuid]
        else:
            (st,) = event_columns(flat, {"stream_time": "excl"})
            ksrc = kuid = None
        direct = np.bincount(owner, weights=st, minlength=n).astype(np.float64, copy=False)
        del flat, st
        self.has_kernels = lens > 0  # (in tree.ops order)
        del lens
        # each op's kind (CPU_OP / LAUNCH / another event), in tree.ops order; and whether it
        # owns its kernels (owns(): a launch call nested in another event does not)
        self.kind = np.array([_KIND.get(o.cat, OTHER) for o in ops], dtype=np.int8)
        self.owning = self.kind != IN_LAUNCH
        for i in np.flatnonzero(~self.owning).tolist():  # (launch calls: rare in a built tree)
            self.owning[i] = ops[i].parent is None
        # every op's kernels end to end (tree.ops order): their columns, uids and op's uid (None
        # where not all read from one Columns), for the sheets that list the ops' kernels
        self.kernel_src = ksrc
        self.kernel_uid = kuid.astype(np.int32) if kuid is not None else None
        self.kernel_owner = owner if kuid is not None else None
        del owner, kuid
        self.direct = direct
        self.subtree = _subtree_sums(tree, ops, uid, n, direct, self.owning)


def _subtree_sums(tree, ops, uid, n, direct, owning) -> np.ndarray:
    """Each op's direct time if it owns its kernels (:func:`owns`), plus its children's subtree
    sums in their order: level by level from the deepest (one ``np.bincount`` per level of the
    tree, over each node's own time and then its children's sums, which adds per node in the
    order the recursive sum does: ``((own + c1) + c2) + ...``, bit for bit). Ops not under
    ``tree.roots`` keep 0."""
    clens, kids = Op.children_of(ops)
    clens = np.array(clens, dtype=np.int32)
    roots = tree.roots
    if len(kids) + len(roots) != len(ops):  # (children outside tree.ops, or ops under no root)
        return _subtree_walk(tree, n, direct)
    kid_uid = _uids(kids)[1]
    kid_uid = np.array([o.uid for o in kids], dtype=np.int32) if kid_uid is None else kid_uid.astype(np.int32)
    del kids
    ccount = np.zeros(n, dtype=np.int32)
    ccount[uid] = clens
    cstart = np.zeros(n, dtype=np.int32)
    cstart[uid] = np.cumsum(clens) - clens  # (each op's first child in kid_uid)
    del clens
    own = direct.copy()  # (a launch call inside another event owns no kernels: owns())
    own[uid[~owning]] = 0.0
    levels = []  # (the nodes of each level, their children's positions in kid_uid)
    f = np.array([r.uid for r in roots], dtype=np.int32)
    while f.size:
        cnt = ccount[f]
        m = int(cnt.sum())
        at = np.repeat(cstart[f] - (np.cumsum(cnt, dtype=np.int32) - cnt), cnt) + np.arange(m, dtype=np.int32)
        levels.append((f, cnt, at))
        f = kid_uid[at]
    sub = np.zeros(n, dtype=np.float64)
    for f, cnt, at in reversed(levels):
        k = f.size
        w = np.concatenate((own[f], sub[kid_uid[at]]))
        b = np.concatenate((np.arange(k), np.repeat(np.arange(k), cnt)))
        sub[f] = np.bincount(b, weights=w, minlength=k)
    return sub


def _subtree_walk(tree, n, direct) -> np.ndarray:
    """:func:`_subtree_sums` op by op (a tree whose children are not all in ``tree.ops``)."""
    subtree = array("d", bytes(8 * n))
    # children before parents: the reverse of a pre-order walk (no recursion), each op's
    # children added in their order (the sum of a recursive post-order walk, bit for bit)
    order: list = []
    stack = list(tree.roots)
    push, pop, visit = stack.extend, stack.pop, order.append
    while stack:
        o = pop()
        visit(o)
        if o.children:
            push(o.children)
    for o in reversed(order):
        s = direct[o.uid] if o.cat not in LAUNCH or o.parent is None else 0.0  # owns(o)
        if o.children:
            for c in o.children:
                s += subtree[c.uid]
        subtree[o.uid] = s
    return np.frombuffer(subtree, dtype=np.float64)
