"""Op sheets: ``ops_summary``, ``ops_summary_by_category``, ``ops_unique_args``.

Times are GPU kernel times in µs attributed through the tree: an op's *direct* time is the
time of the kernels its own runtime calls launched; its *subtree* time adds its children's.
Percentages are of all GPU event time in the trace (kernels, memcpy, memset; where events
overlap on one stream the overlap counts once, see :mod:`perfreport.tables.op_times`), so
the ``(unlinked GPU events)`` row closes the sum to 100%.
"""

from __future__ import annotations

import re
from itertools import chain
from operator import attrgetter

import numpy as np

from perfreport.events import CPU_OP, DRIVER, MEMCPY, MEMSET, RUNTIME
from perfreport.models.registry import category_of
from perfreport.stats.order import median
from perfreport.tables.kernel_codes import event_codes, first_codes, first_seen, name_stream_codes
from perfreport.tables.launcher_codes import unlinked
from perfreport.tables.op_codes import args_codes
from perfreport.tables.op_rows import _owners_per_name, _row_kernels, op_rows
from perfreport.tables.op_times import OpTimes, event_columns, gpu_time, kernel_time, shared, shared_uids
from perfreport.tables.timeline import is_comm_name
from perfreport.tables.columns import INT, PCT, US
from perfreport.tables.sheet import Sheet, fmt_dims, fmt_list, rank
from perfreport.tables import columns as C

UNLINKED = "(unlinked GPU events)"
_uid, _kernels, _name = attrgetter("uid"), attrgetter("kernels"), attrgetter("name")


# annotations that wrap a torch.compile / Inductor graph: their kernels are generated code
COMPILED_RX = re.compile(
    r"CompiledFxGraph|Torch-Compiled Region|CompiledFunction|"
    r"compiled_fx_graph|inductor",
    re.I,
)


def kernel_category(g, around: str) -> str:
    """What a GPU event launched directly inside annotation ``around`` is: ``memcpy``
    (copies, memsets), ``comm`` (NCCL/RCCL collectives), ``graph replay`` (launched by a graph
    launch: no shapes), ``compiled`` (inside a compiled-graph annotation, or a Triton kernel),
    else ``other``. Never ``user_annotation``: the annotation says where, not what."""
    if g.cat in (MEMCPY, MEMSET):
        return "memcpy"
    if is_comm_name(g.name):
        return "comm"
    if "GraphLaunch" in (g.launch_name or ""):
        return "graph replay"
    if COMPILED_RX.search(around) or g.name.startswith("triton_"):
        return "compiled"
    return "other"


def annotation_units(o, kernels=None) -> list[tuple[str, str, list]]:
    """(row name, category, kernels) for the direct kernels of an annotation (or python
    frame), or those of them in ``kernels``: split by :func:`kernel_category`; each compiled kernel is a unit of its own,
    named after the kernel (the annotation's name says only which graph ran)."""
    units: dict = {}
    out = []
    for k in (o.kernels if kernels is None else kernels) or ():
        c = kernel_category(k, o.name)
        if c == "compiled":
            out.append((k.name, c, [k]))
        else:
            units.setdefault(c, []).append(k)
    return [(o.name, c, ks) for c, ks in units.items()] + out


def category(o, kernels=None) -> str:
    """The category of ``o``'s row: the registry's for a cpu_op; for an annotation, what its
    direct kernels (or ``kernels``) are, by most time (:func:`kernel_category`)."""
    if o.cat in (RUNTIME, DRIVER):
        return "runtime (no op)"
    if o.cat == CPU_OP:
        return category_of(o.name)
    ks = o.kernels if kernels is None else kernels
    if not ks:
        return o.cat
    t: dict = {}
    for k in ks:
        c = kernel_category(k, o.name)
        t[c] = t.get(c, 0.0) + k.stream_time
    return max(t, key=t.get)


def ops_summary(tree, times: OpTimes, ops: list | None = None) -> Sheet:
    """Per op name: count, direct / subtree kernel time and CPU time, each added op by op in tree
    order (``np.bincount`` over the name codes adds in that order); its category that of its
    first op (the next one's where that has none). ``ops``: :func:`op_rows`, if made."""
    ops = op_rows(tree, times) if ops is None else ops
    code, names = event_codes(ops, "name")
    uid, dur = _op_durs(ops)
    n = len(names)
    count = np.bincount(code, minlength=n).tolist()
    direct, sub = (np.bincount(code, weights=t[uid], minlength=n).tolist() for t in (times.direct, times.subtree))
    cpu = np.bincount(code, weights=dur, minlength=n).tolist()
    del uid, dur
    f64 = np.float64  # the same sums, typed as when added from the arrays
    rows = [
        {
            C.NAME: k,
            C.CATEGORY: cat,
            C.COUNT: c,
            C.DIRECT_KERNEL_TIME_US: f64(d),
            C.SUBTREE_KERNEL_TIME_US: f64(t),
            C.CPU_TIME_US: u,
        }
        for k, cat, c, d, t, u in zip(names, _first_categories(ops, code, n), count, direct, sub, cpu)
    ]
    un, un_uids = unlinked(tree.gpu)
    if un:
        with shared(un, un_uids):
            t = kernel_time(un)
        rows.append(
            {
                C.NAME: UNLINKED,
                C.CATEGORY: "unlinked",
                C.COUNT: len(un),
                C.DIRECT_KERNEL_TIME_US: t,
                C.SUBTREE_KERNEL_TIME_US: t,
                C.CPU_TIME_US: 0.0,
            }
        )
    cols = [
        C.NAME,
        C.CATEGORY,
        C.COUNT,
        C.DIRECT_KERNEL_TIME_US,
        C.SUBTREE_KERNEL_TIME_US,
        C.CPU_TIME_US,
        C.PERCENT_PCT,
        C.CUMULATIVE_PERCENT_PCT,
    ]
    key = C.DIRECT_KERNEL_TIME_US if tree.gpu else C.CPU_TIME_US
    total = gpu_time(tree) if tree.gpu else sum(r[key] for r in rows)
    rank(rows, key, total)
    notes = [] if tree.gpu else ["no GPU events: percentages are of CPU op time"]
    return Sheet.from_records(
        "ops_summary",
        rows,
        cols,
        {c: US for c in cols[3:6]} | {C.COUNT: INT, C.PERCENT_PCT: PCT, C.CUMULATIVE_PERCENT_PCT: PCT},
        notes,
    )


def _first_categories(ops: list, code: np.ndarray, n: int) -> list[str]:
    """Per code (0..n-1) of ``ops``: the :func:`category` of its first op, or where that is empty
    of the first later one that has one."""
    first = np.full(n, len(ops), dtype=np.intp)
    np.minimum.at(first, code, np.arange(len(ops), dtype=np.intp))
    out = [category(ops[i]) for i in first.tolist()]
    for c in [c for c, v in enumerate(out) if not v]:  # (rare: an op of no category)
        out[c] = next((v for o, k in zip(ops, code.tolist()) if k == c and (v := category(o))), "")
    return out


def ops_summary_by_category(summary: Sheet, tree, ops: list | None = None, times: OpTimes | None = None) -> Sheet:
    """Time and count per category. With GPU events, ``count`` counts the ops that launched
    kernels themselves (direct kernels, what the time column sums), not the zero-time wrappers
    around them: one ``aten::conv2d`` -> ``convolution`` -> ``_convolution`` ->
    ``miopen_convolution`` call is one op of its category, not four. Without GPU events every op
    has its own CPU time, so every row's count is kept. ``ops``, ``times``: the summary's
    :func:`op_rows` and :class:`OpTimes`, if made (the ops that launched kernels themselves are
    then counted per name from the kernel arrays: no pass over tree.ops)."""
    key = C.DIRECT_KERNEL_TIME_US if tree.gpu else C.CPU_TIME_US
    cat_of = {r[C.NAME]: r[C.CATEGORY] for r in summary.records()}
    agg: dict = {}
    for r in summary.records():
        a = agg.setdefault(r[C.CATEGORY], [0, 0.0])
        a[0] += r[C.COUNT] if not tree.gpu or r[C.NAME] == UNLINKED else 0
        a[1] += r[key]
    per_name = _owners_per_name(ops, times) if tree.gpu else None
    if per_name is not None:
        for name, c in per_name:
            if name in cat_of:
                agg[cat_of[name]][0] += c
    elif tree.gpu:
        for o in tree.ops:  # the rows' ops (op_rows) that launched kernels themselves
            if o.kernels and o.name in cat_of and (o.cat not in (RUNTIME, DRIVER) or o.parent is None):
                agg[cat_of[o.name]][0] += 1
    agg = {c: v for c, v in agg.items() if v[0] or v[1]}
    rows = [{C.CATEGORY: c, C.COUNT: n, key: t} for c, (n, t) in agg.items()]
    total = gpu_time(tree) if tree.gpu else sum(r[key] for r in rows)
    rank(rows, key, total)
    cols = [C.CATEGORY, C.COUNT, key, C.PERCENT_PCT, C.CUMULATIVE_PERCENT_PCT]
    return Sheet.from_records(
        "ops_summary_by_category",
        rows,
        cols,
        {key: US, C.COUNT: INT, C.PERCENT_PCT: PCT, C.CUMULATIVE_PERCENT_PCT: PCT},
    )


class KernelAcc:
    """Kernels across the instances of a group, as ``name [stream s] x count, mean µs``."""

    __slots__ = ("acc",)

    def __init__(self):
        self.acc: dict = {}

    def add(self, kernels) -> None:
        acc = self.acc
        for k in kernels:
            key = (k.name, k.stream)
            a = acc.get(key)
            if a is None:
                acc[key] = [1, k.dur]
            else:
                a[0] += 1
                a[1] += k.dur

    def text(self) -> str:
        return "; ".join(f"{n} [stream {s}] x{c}, mean {t / c:.3f} µs" for (n, s), (c, t) in self.acc.items())


def kernels_summary_text(lists) -> str:
    acc = KernelAcc()
    for ks in lists:
        acc.add(ks)
    return acc.text()


def kernel_lists(pk, code, durs, keys: list, npart: int) -> list[dict]:
    """Per part, :class:`KernelAcc`'s ``{(name, stream): [count, Σ dur]}`` in the order the
    kernels first appear (``pk``: part of each kernel, ``code``: its index into ``keys``)."""
    out: list = [{} for _ in range(npart)]
    n = len(pk)
    if not n:
        return out
    nk = len(keys)
    c = pk.astype(np.int64) * nk + code
    m = npart * nk
    if m <= 4 * n + 4096:  # few (part, kernel) pairs: dense counts, no sort of the kernels
        count = np.bincount(c, minlength=m)
        total = np.bincount(c, weights=durs, minlength=m)
        first = np.full(m, n, dtype=np.int64)
        np.minimum.at(first, c, np.arange(n))
        del c
        at = np.flatnonzero(count)
        at = at[np.argsort(first[at], kind="stable")]
        pairs = zip(at.tolist(), count[at].tolist(), total[at].tolist())
    else:
        u, first, inv = np.unique(c, return_index=True, return_inverse=True)
        del c
        order = np.argsort(first, kind="stable")
        count, total = np.bincount(inv), np.bincount(inv, weights=durs)
        pairs = zip(u[order].tolist(), count[order].tolist(), total[order].tolist())
    for j, cnt, tot in pairs:
        p, k = divmod(j, nk)
        out[p][keys[k]] = [cnt, tot]
    return out


def _kernel_texts(ops: list, gid: np.ndarray, ngroups: int, times: OpTimes | None = None, gpu=None) -> list[str]:
    """:func:`kernels_summary_text` of each group's ops' kernels, for all groups at once
    (``gid``: each op's group; a group's kernels are taken in its ops' order, as listing
    them group by group would). With ``times`` and ``gpu`` (tree.gpu, shared) the kernels are
    those :class:`OpTimes` laid end to end, picked by their op (``ops`` is a subsequence of
    tree.ops, so they come in the same order): no pass over the records."""
    fast = _row_kernels(ops, gid, times, gpu)
    if fast is not None:
        flat, grp, src_uid, name_code, names = fast
    else:
        kl = [k or () for k in map(_kernels, ops)]
        flat = list(chain.from_iterable(kl))
        grp = np.repeat(gid, np.fromiter(map(len, kl), dtype=np.int32, count=len(kl)))
        del kl
        name_code, names = first_codes(flat, _name)
        src_uid = None
    with shared(flat, src_uid):  # (one uid gather for the streams and the durations)
        code, keys = name_stream_codes(flat, name_code, names)
        (durs,) = event_columns(flat, {"dur": "dur"})
    del flat, name_code
    out = []
    for acc in kernel_lists(grp, code, durs, keys, ngroups):
        ka = KernelAcc()
        ka.acc = acc
        out.append(ka.text())
    return out


def _op_durs(ops: list) -> tuple[np.ndarray, np.ndarray]:
    """(uid, ``dur``) of each of ``ops``: gathered from the tree's columns when every op reads
    from one, else read one by one (records made outside the tree build)."""
    src, uid = shared_uids(ops)
    if uid is not None:
        return uid, np.asarray(src.dur, dtype=np.float64)[uid]
    n = len(ops)
    uid = np.fromiter(map(_uid, ops), dtype=np.intp, count=n)
    return uid, np.fromiter((o.dur for o in ops), dtype=np.float64, count=n)


def ops_unique_args(tree, times: OpTimes, ops: list | None = None) -> Sheet:
    """Per (op name, argument set): counts, direct/subtree kernel time statistics, CPU time and
    the kernels. The row ops are grouped by one stable sort on their group code (a group's
    values in op order, the statistics those of per-group arrays). ``ops``: :func:`op_rows`, if made."""
    ops = op_rows(tree, times) if ops is None else ops
    # a group per (name, argument set; args dicts are interned by the reader), numbered as first seen
    name_code, names = event_codes(ops, "name")
    ac = args_codes(ops, empty=True)
    gid = name_code.astype(np.int64) * (int(ac.max()) + 1 if ac.size else 1) + ac
    del ac
    gid, at = first_seen(gid)
    ng = at.size
    texts = _kernel_texts(ops, gid, ng, times, tree.gpu)
    uid, cpu_all = _op_durs(ops)
    order = np.argsort(gid, kind="stable")
    ends = np.cumsum(np.bincount(gid, minlength=ng)).tolist()
    first = order[[0] + ends[:-1]].tolist() if ng else []
    cpu_all = cpu_all[order]
    uid = uid[order]
    d_all, s_all = times.direct[uid], times.subtree[uid]
    del order, uid
    rows = []
    for name, text, i0, a, b in zip([names[c] for c in name_code[at].tolist()], texts, first, [0] + ends[:-1], ends):
        o0 = ops[i0]
        args = o0.args
        d, s, cpu = d_all[a:b], s_all[a:b], cpu_all[a:b]
        rows.append(
            {
                C.NAME: name,
                C.CATEGORY: category(o0),
                C.INPUT_DIMS: fmt_dims(args.get("Input Dims")),
                C.INPUT_TYPES: fmt_list(args.get("Input type")),
                C.INPUT_STRIDES: fmt_dims(args.get("Input Strides")),
                C.CONCRETE_INPUTS: fmt_list(args.get("Concrete Inputs")),
                C.COUNT: b - a,
                C.DIRECT_KERNEL_TIME_MEAN_US: d.mean(),
                C.DIRECT_KERNEL_TIME_MEDIAN_US: float(median(d)),
                C.DIRECT_KERNEL_TIME_STD_US: d.std(ddof=1) if b - a > 1 else 0.0,
                C.DIRECT_KERNEL_TIME_MIN_US: d.min(),
                C.DIRECT_KERNEL_TIME_MAX_US: d.max(),
                C.DIRECT_KERNEL_TIME_SUM_US: d.sum(),
                C.SUBTREE_KERNEL_TIME_SUM_US: s.sum(),
                C.CPU_TIME_MEAN_US: cpu.mean(),
                C.CPU_TIME_SUM_US: cpu.sum(),
                C.KERNELS: text,
                C.EXAMPLE_TS_US: o0.ts,
            }
        )
    del ops, d_all, s_all, cpu_all
    key = C.DIRECT_KERNEL_TIME_SUM_US if tree.gpu else C.CPU_TIME_SUM_US
    total = gpu_time(tree) if tree.gpu else sum(r[key] for r in rows)
    rank(rows, key, total)
    cols = [
        C.NAME,
        C.CATEGORY,
        C.INPUT_DIMS,
        C.INPUT_TYPES,
        C.INPUT_STRIDES,
        C.CONCRETE_INPUTS,
        C.COUNT,
        C.DIRECT_KERNEL_TIME_MEAN_US,
        C.DIRECT_KERNEL_TIME_MEDIAN_US,
        C.DIRECT_KERNEL_TIME_STD_US,
        C.DIRECT_KERNEL_TIME_MIN_US,
        C.DIRECT_KERNEL_TIME_MAX_US,
        C.DIRECT_KERNEL_TIME_SUM_US,
        C.SUBTREE_KERNEL_TIME_SUM_US,
        C.CPU_TIME_MEAN_US,
        C.CPU_TIME_SUM_US,
        C.PERCENT_PCT,
        C.CUMULATIVE_PERCENT_PCT,
        C.KERNELS,
        C.EXAMPLE_TS_US,
    ]
    fm = {c: US for c in cols if "(µs)" in c}
    fm.update({C.COUNT: INT, C.PERCENT_PCT: PCT, C.CUMULATIVE_PERCENT_PCT: PCT})
    return Sheet.from_records("ops_unique_args", rows, cols, fm)
