"""Kernel sheets: ``kernel_summary`` and ``short_kernels``.

Durations are grouped in ``array('d')`` (8 bytes a kernel, not a float object and a list slot).
"""

from __future__ import annotations

from array import array
from collections import defaultdict
from functools import partial

import numpy as np

from perfreport.events import CPU_OP
from perfreport.tables.op_times import LAUNCH, gpu_time
from perfreport.tables.ops import UNLINKED, category, kernel_category
from perfreport.tables.columns import INT, PCT, US
from perfreport.tables.sheet import Sheet, fmt_dims, fmt_list
from perfreport.tables import columns as C


_durations = partial(array, "d")


def parent_op(g):
    """(parent op name, its category) of GPU event ``g``: the kernel_summary grouping."""
    op = g.op
    if op is None:
        return (UNLINKED, "unlinked") if g.launcher is None else (g.owner.name, "runtime (no op)")
    if op.cat != CPU_OP and op.cat not in LAUNCH:  # an annotation says where, not what
        return op.name, kernel_category(g, op.name)
    return op.name, category(op)


def _parents():
    """``parent_op`` with what depends on the op alone read once per op (its name and its
    category: a registry lookup), for the loops over every GPU event."""
    by_op: dict = {}

    def parent(g):
        op = g.op
        if op is None or (op.cat != CPU_OP and op.cat not in LAUNCH):
            return parent_op(g)  # unlinked, a launch outside any op, an annotation's kernel
        got = by_op.get(id(op))
        if got is None:
            got = by_op[id(op)] = (op.name, category(op))
        return got

    return parent


def kernel_summary(tree, total_time_us: float) -> Sheet:
    """Per (parent op, kernel name, stream): duration statistics and shares.

    ``sum`` is stream time (overlap with an earlier event on the same stream counted once,
    as in the op tables, so the sheet sums to the GPU time); mean / median / min / max are
    of the kernels' own durations.
    """
    groups: dict = defaultdict(_durations)
    cats, excl = {}, {}
    parent = _parents()
    for g in tree.gpu:
        pname, pcat = parent(g)
        key = (pname, g.name, g.stream)
        groups[key].append(g.dur)
        excl[key] = excl.get(key, 0.0) + g.stream_time
        cats[key] = pcat
    ksum = gpu_time(tree)
    rows = []
    for (pname, kname, stream), durs in groups.items():
        d = np.asarray(durs)
        t = excl[(pname, kname, stream)]
        rows.append(
            {
                C.PARENT_OP_CATEGORY: cats[(pname, kname, stream)],
                C.PARENT_OP: pname,
                C.KERNEL: kname,
                C.STREAM: stream,
                C.COUNT: len(d),
                C.SUM_US: t,
                C.MEAN_US: d.mean(),
                C.MEDIAN_US: float(np.median(d)),
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


def short_kernels(tree, total_time_us: float, threshold_us: float = 10.0) -> Sheet:
    """Kernels shorter than ``threshold_us``, grouped by parent op, its inputs and kernel name."""
    groups: dict = defaultdict(_durations)
    info = {}
    parent = _parents()
    for g in tree.gpu:
        d = g.dur
        if d >= threshold_us:
            continue
        op = g.op
        pname = parent(g)[0]
        a = op.args if op is not None else {}
        key = (pname, id(a), g.name)
        groups[key].append(d)
        info[key] = a
    rows = []
    for (pname, _, kname), durs in groups.items():
        a = info[(pname, _, kname)]
        d = np.asarray(durs)
        rows.append(
            {
                C.PARENT_OP: pname,
                C.INPUT_DIMS: fmt_dims(a.get("Input Dims")),
                C.INPUT_STRIDES: fmt_dims(a.get("Input Strides")),
                C.CONCRETE_INPUTS: fmt_list(a.get("Concrete Inputs")),
                C.KERNEL: kname,
                C.COUNT: len(d),
                C.SUM_US: d.sum(),
                C.MEAN_US: d.mean(),
                C.PERCENT_OF_GPU_TIMELINE_PCT: 100.0 * d.sum() / total_time_us if total_time_us else 0.0,
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
