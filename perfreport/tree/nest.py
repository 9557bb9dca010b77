"""The nesting of the CPU events per thread, for the tree build (:mod:`perfreport.tree.build`):
one ``lexsort`` and one loop over a stack of open events, in C where the optional extension
``perfreport/tree/_nest.c`` is built (tests/tree/test_nest.py holds it equal to the Python
loop here)."""

from __future__ import annotations

import os

import numpy as np

from perfreport.read.schema import C_DRIVER, C_RUNTIME
from perfreport.tree.link import CHUNK


def nest_by_thread(thr, ts, dur, cat):
    """(nesting order, parent row per row or -1), both int32, of the CPU rows (``thr``:
    int32 thread codes, ``ts`` / ``dur`` float64, ``cat`` int8 category codes, by row).

    Per (pid, tid), by ts with the longer event first at equal ts; an event's parent is
    the innermost open event that ends after it starts. Zero-length runtime calls never
    become parents. The loop runs in C where it is built (:func:`_accelerator`), else in
    Python (:func:`nest_python`, reading its inputs in chunks of the order: no gathered copy
    of the trace's length).
    """
    n = ts.size
    order = np.lexsort((-dur, ts, thr)).astype(np.int32)
    parent = np.full(n, -1, dtype=np.int32)
    if _C is not None:
        _C.nest(order, ts, dur, cat, thr, parent, C_RUNTIME, C_DRIVER)
    else:
        nest_python(order, ts, dur, cat, thr, parent)
    return order, parent


def nest_python(order, ts, dur, cat, thr, parent) -> None:
    """:func:`nest_by_thread`' loop (``parent`` filled in place), in Python: where the C loop
    (``perfreport/tree/_nest.c``, the same steps) is not built or is turned off."""
    par = memoryview(parent)
    stack_rows: list[int] = []
    stack_ends: list[float] = []
    cur = -1
    pop_r, pop_e = stack_rows.pop, stack_ends.pop
    for a in range(0, order.size, CHUNK):
        o = order[a : a + CHUNK]
        t_o = ts[o]
        e_o = dur[o]
        e_o += t_o
        c_o = cat[o]
        push = ((dur[o] > 0) | ((c_o != C_RUNTIME) & (c_o != C_DRIVER))).view(np.uint8)
        for r, t, e, th, ok in zip(
            memoryview(o), memoryview(t_o), memoryview(e_o), memoryview(thr[o]), memoryview(push)
        ):
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


def _accelerator():
    """The C loop of :func:`nest_by_thread` (``perfreport.tree._nest``), or None: not built (no
    compiler at install time) or turned off by ``PERFREPORT_PURE_PYTHON`` (any value but ""
    and "0"), as for the reader's (:mod:`perfreport.read.kineto`)."""
    if os.environ.get("PERFREPORT_PURE_PYTHON", "") not in ("", "0"):
        return None
    try:
        from perfreport.tree import _nest
    except ImportError:
        return None
    return _nest


_C = _accelerator()
