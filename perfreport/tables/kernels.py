"""Kernel sheets: ``kernel_summary`` and ``short_kernels``.

Each GPU event's parent op is found once for both sheets (:func:`gpu_parents`); durations and
stream times are gathered from the tree's columns and grouped by one stable sort (a group's
values in event order, so its statistics are those of the per-group arrays built before).
"""

from __future__ import annotations


import numpy as np

from perfreport.events import _EMPTY, CPU_OP
from perfreport.stats.order import median
from perfreport.tables.kernel_codes import event_codes, first_codes, first_seen, stream_value_codes
from perfreport.tables.launcher_codes import launcher_table
from perfreport.tables.op_codes import args_codes
from perfreport.tables.op_times import LAUNCH, event_columns, gpu_time
from perfreport.tables.ops import UNLINKED, category, kernel_category
from perfreport.tables.columns import INT, PCT, US
from perfreport.tables.sheet import Sheet, fmt_dims, fmt_list
from perfreport.tables import columns as C


def parent_op(g):
    """(parent op name, its category) of GPU event ``g``: the kernel_summary grouping."""
    op = g.op
    if op is None:
        return (UNLINKED, "unlinked") if g.launcher is None else (g.owner.name, "runtime (no op)")
    if op.cat != CPU_OP and op.cat not in LAUNCH:  # an annotation says where, not what
        return op.name, kernel_category(g, op.name)
    return op.name, category(op)


def gpu_parents(tree) -> tuple[np.ndarray, list, np.ndarray, list]:
    """``(op_code, ops, code, table)``: for each event ``i`` of ``tree.gpu`` its
    :attr:`GpuEvent.op` ``ops[op_code[i]]`` (one entry per launcher: an op may repeat) and the index ``code[i]`` of its (parent op name,
    category) (:func:`parent_op`) in ``table`` (numbered as first seen). What depends on the
    launcher alone is found once per launcher (its op), what depends on the op alone once per op
    (a cpu_op's category: a registry lookup once per name); an annotation's kernels are told
    apart event by event. Both kernel sheets group on it (int32 codes, not a tuple per event)."""
    gpu = tree.gpu
    t = launcher_table(gpu)  # (shared with the between-the-kernels arrays)
    lcode, launchers = t.code, t.launchers
    keys: dict = {}  # (name, category) -> raw code
    lraw = np.full(len(launchers), -1, dtype=np.int32)  # per launcher: raw code (-1: event by event)
    lops = list(launchers)  # per launcher: its op
    # a cpu_op launcher (the usual: the tree has no record of most launch calls) is its own op,
    # and its row is its name's (a cpu_op's category is its name's): found once per name, on
    # the name's first cpu_op launcher
    is_cpu = t.cat_is((CPU_OP,))
    nc = t.name[is_cpu]
    at = np.flatnonzero(is_cpu)
    by_name: dict = {}
    lut = np.zeros(max(len(t.names), 1), dtype=np.int32)  # per name code: raw code
    for j in first_seen(nc)[1].tolist():  # (j: the name's first cpu_op launcher, among them)
        op = launchers[int(at[j])]
        c = by_name[op.name] = category(op)
        lut[nc[j]] = keys.setdefault((op.name, c), len(keys))
    lraw[is_cpu] = lut[nc]
    del is_cpu, nc, at, lut
    for i in np.flatnonzero(lraw < 0).tolist():  # no launcher, a launch call, an annotation
        lr = op = launchers[i]
        while op is not None and op.cat in LAUNCH:  # (GpuEvent.op)
            op = op.parent
        lops[i] = op
        if lr is None:
            lraw[i] = keys.setdefault((UNLINKED, "unlinked"), len(keys))
        elif op is None:  # a launch outside any op: the outermost launch call's (GpuEvent.owner)
            while lr.cat in LAUNCH and lr.parent is not None:
                lr = lr.parent
            lraw[i] = keys.setdefault((lr.name, "runtime (no op)"), len(keys))
        elif op.cat == CPU_OP or op.cat in LAUNCH:
            c = by_name.get(op.name) if op.cat == CPU_OP else None
            if c is None:
                c = category(op)
                if op.cat == CPU_OP:
                    by_name[op.name] = c
            lraw[i] = keys.setdefault((op.name, c), len(keys))
    raw = lraw[lcode]
    for i in np.flatnonzero(raw < 0).tolist():  # an annotation's kernels: by what each is
        raw[i] = keys.setdefault(parent_op(gpu[i]), len(keys))
    code, first = first_seen(raw)
    table = list(keys)
    return lcode, lops, code, [table[r] for r in raw[first].tolist()]


def _by_group(gid: np.ndarray, n: int, values: np.ndarray) -> list[np.ndarray]:
    """``values`` split by group id (0..n-1), each group's values in event order."""
    order = np.argsort(gid, kind="stable")
    ends = np.cumsum(np.bincount(gid, minlength=n)).tolist()
    v = values[order]
    return [v[a:b] for a, b in zip([0] + ends[:-1], ends)]


def kernel_summary(tree, total_time_us: float, parents: list | None = None) -> Sheet:
    """Per (parent op, kernel name, stream): duration statistics and shares.

    ``sum`` is stream time (overlap with an earlier event on the same stream counted once,
    as in the op tables, so the sheet sums to the GPU time); mean / median / min / max are
    of the kernels' own durations. ``parents``: :func:`gpu_parents` of the tree, if made.
    """
    gpu = tree.gpu
    _, _, pcode, table = parents or gpu_parents(tree)
    # a row per (parent op name, kernel name, stream), numbered as first seen
    pn, pnames = first_codes([p for p, _ in table])
    kn, knames = event_codes(gpu, "name")
    sc, streams = stream_value_codes(gpu)
    gid = first_seen(pn[pcode].astype(np.int64) * len(knames) + kn)[0].astype(np.int64) * len(streams) + sc
    gid, at = first_seen(gid)
    gid = gid.astype(np.intp)
    last = np.zeros(at.size, dtype=np.intp)
    np.maximum.at(last, gid, np.arange(gid.size, dtype=np.intp))
    cats = [table[p][1] for p in pcode[last].tolist()]  # the last event's, as a dict of keys would keep
    code = [
        (pnames[p], knames[k], streams[s_])
        for p, k, s_ in zip(pn[pcode[at]].tolist(), kn[at].tolist(), sc[at].tolist())
    ]
    dur, st = event_columns(gpu, {"dur": "dur", "stream_time": "excl"})
    excl = np.bincount(gid, weights=st, minlength=len(cats)).tolist()  # in event order, as a running sum
    ksum = gpu_time(tree)
    rows = []
    for (pname, kname, stream), c, d in zip(code, range(len(cats)), _by_group(gid, len(cats), dur)):
        t = excl[c]
        rows.append(
            {
                C.PARENT_OP_CATEGORY: cats[c],
                C.PARENT_OP: pname,
                C.KERNEL: kname,
                C.STREAM: stream,
                C.COUNT: len(d),
                C.SUM_US: t,
                C.MEAN_US: d.mean(),
                C.MEDIAN_US: float(median(d)),
                C.MIN_US: d.min(),
                C.MAX_US: d.max(),
                C.PERCENT_OF_KERNEL_TIME_PCT: 100.0 * t / ksum if ksum else 0.0,
                C.PERCENT_OF_GPU_TIMELINE_PCT: 100.0 * t / total_time_us if total_time_us else 0.0,
            }
        )
    cols = [
        C.PARENT_OP_CATEGORY,
        C.PARENT_OP,
        C.KERNEL,
        C.STREAM,
        C.COUNT,
        C.SUM_US,
        C.MEAN_US,
        C.MEDIAN_US,
        C.MIN_US,
        C.MAX_US,
        C.PERCENT_OF_KERNEL_TIME_PCT,
        C.PERCENT_OF_GPU_TIMELINE_PCT,
    ]
    rows.sort(key=lambda r: -r[C.SUM_US])
    fm = {c: US for c in cols if "(µs)" in c} | {
        C.COUNT: INT,
        C.PERCENT_OF_KERNEL_TIME_PCT: PCT,
        C.PERCENT_OF_GPU_TIMELINE_PCT: PCT,
    }
    return Sheet.from_records("kernel_summary", rows, cols, fm)


def short_kernels(tree, total_time_us: float, threshold_us: float = 10.0, parents: list | None = None) -> Sheet:
    """Kernels shorter than ``threshold_us``, grouped by parent op, its inputs and kernel name
    (``parents``: :func:`gpu_parents` of the tree, if made)."""
    gpu = tree.gpu
    (dur,) = event_columns(gpu, {"dur": "dur"})
    short = np.flatnonzero(~(dur >= threshold_us)).tolist()
    op_code, ops, pcode, table = parents or gpu_parents(tree)
    # a row per (parent op name, its op's argument set, kernel name), numbered as first seen; an
    # event without an op is a row of its own
    pn = first_codes([p for p, _ in table])[0][pcode[short]]
    all_kn, all_names = event_codes(gpu, "name")  # (the short events' names, numbered as first seen among them)
    kn, first = first_seen(all_kn[short])
    knames = [all_names[c] for c in all_kn[short][first].tolist()]
    del all_kn, all_names, first
    lc = op_code[short]
    oc, at = first_seen(lc)  # the short events' launchers, numbered as first seen
    used = [ops[i] for i in lc[at].tolist()]  # their ops
    del lc, at
    has = [i for i, op in enumerate(used) if op is not None]
    aid = np.zeros(len(used), dtype=np.int64)  # argument-set code of each (0: no op)
    aid[has] = args_codes([used[i] for i in has]) + 1
    key = aid[oc]
    alone = np.flatnonzero(key == 0)  # (codes past every argument set's: one per event)
    key[alone] = len(used) + 1 + np.arange(alone.size)
    gid = first_seen(pn.astype(np.int64) * (len(used) + 1 + len(short)) + key)[0].astype(np.int64) * len(knames) + kn
    gid, at = first_seen(gid)
    gid = gid.astype(np.intp)
    code = [(table[pcode[short[i]]][0], None, knames[k]) for i, k in zip(at.tolist(), kn[at].tolist())]
    info = [used[o] for o in oc[at].tolist()]  # each row's op
    rows = []
    fmt: dict = {}  # id(args) -> its three cells
    for (pname, _, kname), op, d in zip(code, info, _by_group(gid, len(info), dur[short])):
        a = op.args if op is not None else _EMPTY
        cells = fmt.get(id(a))
        if cells is None:
            cells = fmt[id(a)] = (
                fmt_dims(a.get("Input Dims")),
                fmt_dims(a.get("Input Strides")),
                fmt_list(a.get("Concrete Inputs")),
            )
        if len(d) == 1:  # one kernel (each event without an op): its sum and mean are its value, exactly
            t = m = d[0]
        else:
            t, m = d.sum(), d.mean()
        # (a row as the list of its cells, in the columns' order: ~2,000 rows at 105 MB)
        rows.append([pname, *cells, kname, len(d), t, m, 100.0 * t / total_time_us if total_time_us else 0.0])
    cols = [
        C.PARENT_OP,
        C.INPUT_DIMS,
        C.INPUT_STRIDES,
        C.CONCRETE_INPUTS,
        C.KERNEL,
        C.COUNT,
        C.SUM_US,
        C.MEAN_US,
        C.PERCENT_OF_GPU_TIMELINE_PCT,
    ]
    at = cols.index(C.SUM_US)
    rows.sort(key=lambda r: -r[at])
    note = f"kernels shorter than {threshold_us:g} µs"
    fm = {C.COUNT: INT, C.SUM_US: US, C.MEAN_US: US, C.PERCENT_OF_GPU_TIMELINE_PCT: PCT}
    return Sheet("short_kernels", cols, rows, fm, [note])
