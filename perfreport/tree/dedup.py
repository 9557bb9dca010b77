"""Duplicate events: the same event recorded twice (a trace merged twice, ``traceEvents``
written twice) is counted once.

Two events are the same event when they agree on every identity field the reader keeps:
name, category, thread (CPU: pid/tid) or device/stream (GPU), ts, dur, correlation (CPU
launch calls and GPU events), ``External id`` and (CPU ops) ``Sequence number``. Distinct
ops that share name, thread, ts and dur (zero-length ``aten::view`` calls in integer-µs
traces) differ in ``External id``, so they are not merged. Rows holding an id beyond int64
(kept in the columns' ``side`` dicts) are never treated as duplicates.

:func:`drop_duplicates` rewrites the reader's columns in place, keeping the first of each
set of identical rows (reading order), before the tree nests or links anything.
"""

from __future__ import annotations

from array import array

import numpy as np

from perfreport.read.kineto import Collector
from perfreport.stats.order import sorted_unique

# columns (name, numpy dtype) that hold identity; ts first
_CPU_KEYS = (
    ("ts", np.float64),
    ("dur", np.float64),
    ("name", np.int32),
    ("cat", np.int8),
    ("thr", np.int32),
    ("cs", np.int64),
    ("ext", np.int64),
)
_GPU_KEYS = (
    ("ts", np.float64),
    ("dur", np.float64),
    ("name", np.int32),
    ("cat", np.int8),
    ("ds", np.int32),
    ("corr", np.int64),
    ("ext", np.int64),
)
_INT64 = ("cs", "ext", "corr", "nbytes")


def _np(arr, dtype) -> np.ndarray:
    return np.frombuffer(arr, dtype=dtype) if len(arr) else np.zeros(0, dtype=dtype)


def duplicate_rows(keys: list[np.ndarray], unique: np.ndarray | None = None) -> np.ndarray:
    """Mask of the rows equal on every key to an earlier row (``keys[0]`` is ts).

    Only rows whose ts occurs more than once are compared on all keys (one argsort on ts,
    then a lexsort of the few candidates). ``unique``: rows never to be marked.
    """
    n = keys[0].size
    dup = np.zeros(n, dtype=bool)
    if n < 2:
        return dup
    o = np.argsort(keys[0], kind="stable")
    st = keys[0][o]
    eq = st[1:] == st[:-1]
    if not eq.any():
        return dup
    cand = sorted_unique(np.concatenate((o[1:][eq], o[:-1][eq])))  # sorted: reading order
    if unique is not None:
        cand = cand[~unique[cand]]
    if cand.size < 2:
        return dup
    sub = [k[cand] for k in keys]
    oo = np.lexsort(sub[::-1])  # stable: the earliest row of a run comes first
    same = np.ones(cand.size - 1, dtype=bool)
    for k in sub:
        ks = k[oo]
        same &= ks[1:] == ks[:-1]
    dup[cand[oo][1:][same]] = True
    return dup


def _remap(rows: dict, keep: np.ndarray) -> dict:
    """A {row: value} dict for the rows left by :func:`_compact`."""
    newrow = np.cumsum(keep) - 1
    return {int(newrow[r]): v for r, v in rows.items() if keep[r]}


def _compact(table, keep: np.ndarray) -> None:
    """Keep only rows ``keep`` in every typed column of ``table`` (and remap ``side``)."""
    for name, col in list(vars(table).items()):
        if isinstance(col, array):
            a = np.frombuffer(col, dtype=col.typecode) if len(col) else np.zeros(0, col.typecode)
            new = array(col.typecode)
            new.frombytes(a[keep].tobytes())
            setattr(table, name, new)
    if table.side:
        newrow = np.cumsum(keep) - 1
        table.side = {(f, int(newrow[r])): v for (f, r), v in table.side.items() if keep[r]}


def _side_rows(table, n: int) -> np.ndarray:
    m = np.zeros(n, dtype=bool)
    for _, r in table.side:
        m[r] = True
    return m


def drop_duplicates(col: Collector) -> tuple[int, int]:
    """Drop repeated CPU and GPU rows (and repeated gpu_user_annotation ranges) from ``col``.

    Returns (CPU rows dropped, GPU rows dropped).
    """
    dropped = []
    for table, keys in ((col.c, _CPU_KEYS), (col.g, _GPU_KEYS)):
        n = len(table)
        if n < 2:
            dropped.append(0)
            continue
        ks = [_np(getattr(table, k), dt) for k, dt in keys]
        dup = duplicate_rows(ks, _side_rows(table, n) if table.side else None)
        del ks
        k = int(dup.sum())
        if k:
            _compact(table, ~dup)
            if table is col.g and getattr(col, "gpu_comm", None):  # {GPU row: args}
                col.gpu_comm = _remap(col.gpu_comm, ~dup)
        dropped.append(k)
    if col.gpu_annotations:
        seen, out = set(), []
        for a in col.gpu_annotations:
            key = (a.name, a.device, a.stream, a.ts, a.dur, a.correlation, a.ext_id)
            if key not in seen:
                seen.add(key)
                out.append(a)
        col.gpu_annotations = out
    return dropped[0], dropped[1]


def duplicates_warning(n_cpu: int, n_gpu: int, n_kept_before: int) -> str | None:
    """The warning line for dropped duplicates (None when there were none).

    ``n_kept_before``: CPU + GPU rows before dropping. When a quarter or more of them were
    duplicates the line says the trace is mostly a repeat (a file merged twice).
    """
    n = n_cpu + n_gpu
    if not n:
        return None
    s = (
        f"{n} duplicate events dropped ({n_cpu} CPU, {n_gpu} GPU: same name, category, "
        f"thread or stream, ts, dur and ids as an earlier event); each is counted once"
    )
    share = n / n_kept_before if n_kept_before else 0.0
    if share >= 0.25:
        s += f"; {100.0 * share:.0f}% of the events are repeats: the trace looks merged or written twice"
    return s


__all__ = ["drop_duplicates", "duplicate_rows", "duplicates_warning"]
