"""The op sheets' rows (:func:`op_rows`) and what is read for them from :class:`OpTimes`' arrays
rather than op by op: the rows themselves, the ops per name that launched kernels, the rows'
kernels (:mod:`perfreport.tables.ops` builds the sheets)."""

from __future__ import annotations

from itertools import compress

import numpy as np

from perfreport.events import CPU_OP
from perfreport.tables.kernel_codes import event_codes, positions_by_uid
from perfreport.tables.op_times import CPU, LAUNCH, OpTimes, shared_uids


def op_rows(tree, times: OpTimes) -> list:
    """The ops that matter to the op sheets, in tree order: every cpu_op with kernel time in
    its subtree or kernels of its own (every cpu_op without GPU events), and every other event
    that launched kernels as their owner (an annotation, a launch call outside any op)."""
    return op_rows_at(tree, times)[0]


def op_rows_at(tree, times: OpTimes) -> tuple[list, object]:
    """(:func:`op_rows`, their ``(columns, uids)`` for :func:`~perfreport.tables.op_times.shared`
    or None): picked by numpy over :class:`OpTimes`' per-op arrays (kind, kernels, ownership,
    subtree time), the rule of :func:`op_rows`."""
    ops = tree.ops
    if tree.gpu and len(times.kind) == len(ops):
        cpu = times.kind == CPU
        with_k = times.has_kernels
        keep = (cpu & ((times.subtree[times.uid] > 0) | with_k)) | (~cpu & with_k & times.owning)
        del cpu, with_k
        rows = list(compress(ops, keep.tolist()))  # (bools: no int object per op)
        return rows, ((times.src, times.uid[keep]) if times.src is not None else None)
    return _op_rows_loop(tree, times), None


def _op_rows_loop(tree, times: OpTimes) -> list:
    """:func:`op_rows` op by op."""
    sub = _floats(times.subtree)
    if not tree.gpu:
        return [o for o in tree.ops if o.cat == CPU_OP or (o.kernels and (o.cat not in LAUNCH or o.parent is None))]
    return [
        o
        for o in tree.ops
        if (o.cat == CPU_OP and (sub[o.uid] > 0 or o.kernels))
        or (o.cat != CPU_OP and o.kernels and (o.cat not in LAUNCH or o.parent is None))
    ]


def _floats(a: np.ndarray) -> memoryview:
    """A float64 array as a memoryview: indexed like a list (a numpy scalar read costs ~5x),
    without a copy of Python floats."""
    return memoryview(np.ascontiguousarray(a, dtype=np.float64)).cast("B").cast("d")


def _owners_per_name(ops: list | None, times: OpTimes | None):
    """[(name, how many of ``ops`` have kernels)] where ``ops`` is :func:`op_rows` with GPU
    events: an op with kernels that owns them (:func:`~perfreport.tables.op_times.owns`) is
    a row, and every row with kernels owns them, so these are the ops the category counts;
    None where the kernel arrays or the rows' uids are not held."""
    if ops is None or times is None or times.kernel_owner is None:
        return None
    ruid = shared_uids(ops)[1]
    if ruid is None:
        return None
    has = np.bincount(times.kernel_owner, minlength=times.direct.size)[ruid] > 0
    code, names = event_codes(ops, "name")
    return zip(names, np.bincount(code[has], minlength=len(names)).tolist())


def _row_kernels(ops: list, gid: np.ndarray, times, gpu):
    """(the kernels of ``ops``, each one's group, their (columns, uids), name codes, names) from
    ``times``' kernel arrays and ``gpu``'s shared codes, or None where those are not held."""
    if times is None or gpu is None or times.kernel_uid is None:
        return None
    ruid = shared_uids(ops)[1]
    pos = positions_by_uid(gpu)
    src = shared_uids(gpu)[0]
    if ruid is None or pos is None or src is not times.kernel_src:
        return None
    row_gid = np.full(times.direct.size, -1, dtype=np.int32)
    row_gid[ruid] = gid
    g = row_gid[times.kernel_owner]
    del row_gid
    m = g >= 0
    kuid = times.kernel_uid[m]
    at = pos[kuid]
    if (at < 0).any():  # (a kernel not in gpu)
        return None
    all_code, names = event_codes(gpu, "name")
    rec = np.empty(len(gpu), dtype=object)  # (the records by position: picked without an int object each)
    rec[:] = gpu
    flat = rec[at].tolist()
    del rec
    return flat, g[m], (src, kuid), all_code[at], names


__all__ = ["op_rows", "op_rows_at"]
