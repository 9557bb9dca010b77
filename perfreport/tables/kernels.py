"""Kernel sheets: ``kernel_summary`` and ``short_kernels``.

Each GPU event's parent op is found once for both sheets (:func:`gpu_parents`); durations and
stream times are gathered from the tree's columns and grouped by one stable sort (a group's
values in event order, so its statistics are those of the per-group arrays built before).
"""

from __future__ import annotations

from array import array

import numpy as np

from perfreport.events import CPU_OP
from perfreport.stats.order import median
from perfreport.tables.gpu_arrays import event_streams
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


def gpu_parents(tree) -> tuple[list, array, list]:
    """``(ops, code, table)``: for each event of ``tree.gpu`` its :attr:`GpuEvent.op` and the
    index ``code[i]`` of its (parent op name, category) in ``table``; what depends on the op
    alone is read once per launcher (its name, and its category: a registry lookup). Both kernel
    sheets group on it (C ints per event, not a tuple each: the peak stays down)."""
    by_launcher: dict = {}  # launcher -> code of its op's row (a per-op event's launcher)
    index: dict = {}  # (name, category) -> code
    table: list = []
    ops: list = []
    code = array("i")
    for g in tree.gpu:
        op = g.op
        lr = g.launcher
        c = by_launcher.get(lr) if lr is not None else None
        if c is None:
            if op is not None and (op.cat == CPU_OP or op.cat in LAUNCH):
                key = (op.name, category(op))  # an op's row once (per launcher)
                by_launcher[lr] = c = index.get(key)
            else:  # an unlinked event, a launch outside any op or an annotation's kernel: each time
                key = parent_op(g)
                c = index.get(key)
            if c is None:
                c = index[key] = len(table)
                table.append(key)
                if lr is not None and lr in by_launcher:
                    by_launcher[lr] = c
        ops.append(op)
        code.append(c)
    return ops, code, table


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
    code: dict = {}
    cats: list = []
    gid = np.empty(len(gpu), dtype=np.intp)
    _, pcode, table = parents or gpu_parents(tree)
    for i, (g, p, stream) in enumerate(zip(gpu, pcode, event_streams(gpu))):
        pname, pcat = table[p]
        key = (pname, g.name, stream)
        c = code.get(key)
        if c is None:
            c = code[key] = len(cats)
            cats.append(pcat)
        else:
            cats[c] = pcat  # the last event's, as a dict of keys would keep
        gid[i] = c
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
    ops, pcode, table = parents or gpu_parents(tree)
    code: dict = {}
    info = []
    gid = array("q")
    last = la = None  # an op's kernels come in runs: its args read once per run
    for e in short:
        op = ops[e]
        if op is None:
            a = {}  # (a dict of its own: an event without an op is a row of its own)
        elif op is last:
            a = la
        else:
            last, a = op, op.args
            la = a
        key = (table[pcode[e]][0], id(a), gpu[e].name)
        c = code.get(key)
        if c is None:
            c = code[key] = len(info)
            info.append(a)
        gid.append(c)
    gid = np.frombuffer(gid, dtype=np.int64).astype(np.intp, copy=False)
    rows = []
    for (pname, _, kname), a, d in zip(code, info, _by_group(gid, len(info), dur[short])):
        if len(d) == 1:  # one kernel (each event without an op): its sum and mean are its value, exactly
            t = m = d[0]
        else:
            t, m = d.sum(), d.mean()
        rows.append(
            {
                C.PARENT_OP: pname,
                C.INPUT_DIMS: fmt_dims(a.get("Input Dims")),
                C.INPUT_STRIDES: fmt_dims(a.get("Input Strides")),
                C.CONCRETE_INPUTS: fmt_list(a.get("Concrete Inputs")),
                C.KERNEL: kname,
                C.COUNT: len(d),
                C.SUM_US: t,
                C.MEAN_US: m,
                C.PERCENT_OF_GPU_TIMELINE_PCT: 100.0 * t / total_time_us if total_time_us else 0.0,
            }
        )
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
    rows.sort(key=lambda r: -r[C.SUM_US])
    note = f"kernels shorter than {threshold_us:g} µs"
    return Sheet.from_records(
        "short_kernels",
        rows,
        cols,
        {C.COUNT: INT, C.SUM_US: US, C.MEAN_US: US, C.PERCENT_OF_GPU_TIMELINE_PCT: PCT},
        [note],
    )
