"""The units of the perf sheets: the walk that finds every GPU event's unit once (:func:`collect_units`)
and the units' kernel-list codes (:func:`sig_codes`); :mod:`.perf_groups` groups them."""

from __future__ import annotations

import numpy as np

from perfreport.events import CPU_OP, as_seq
from perfreport.models.registry import model_for, model_for_op
from perfreport.tables.coverage import split_graph_kernels
from perfreport.stats.order import sorted_unique
from perfreport.tables.kernel_codes import first_seen
from perfreport.tables.op_times import LAUNCH
from perfreport.tables.ops import annotation_units


def linked_units(tree) -> tuple[list, list, list, list, list]:
    """(ops, names, kernel lists, model classes or None, meta keys): the units launched from the
    CPU side (see :func:`collect_units`), in walk order, as five lists (8 bytes a unit each, not
    a tuple of 80). A leaf op's kernel list is its ``_k`` slot as the tree holds it: one record
    for a lone kernel (no tuple of one made per unit), None for none; read them with
    :func:`~perfreport.events.as_seq` / :func:`~perfreport.events.counts_and_flat`. The meta key tells the ops' ``perf_meta`` apart (its sorted items' repr; ""
    for none) for the ops with a model."""
    models: dict = {}  # op name -> model_for(name), for ops without perf_meta (the registry is fixed here)
    units: tuple = ([], [], [], [], [])
    add_op, add_name, add_ks, add_cls, add_mk = (u.append for u in units)

    def add(o, name, ks, cls=None, mk=""):
        add_op(o)
        add_name(name)
        add_ks(ks)
        add_cls(cls)
        add_mk(mk)

    has_gpu = bool(tree.gpu)
    src = tree.ops[0]._src if tree.ops else None
    if src is None or src.__class__ is tuple:
        src = meta_of = None
    else:
        meta_of = src.meta.get  # (perf_meta of an op that reads from the columns: no property call)
    stack = [iter(tree.roots)]  # (iterators over children: depth first, in time order)
    while stack:
        for o in stack[-1]:
            cat = o.cat
            if cat in LAUNCH:
                if o.parent is None and o.kernels:
                    add(o, o.name, o.kernels)
                if o.children:  # ops nested in a launch call (rare) own theirs
                    stack.append(iter(o.children))
                    break
                continue
            if cat == CPU_OP:
                meta = meta_of(o.uid) if o._src is src else o.perf_meta
                if meta:
                    cls = model_for_op(o.name, meta)
                    mk = repr(sorted(meta.items()))
                else:
                    cls = models.get(o.name, models)
                    if cls is models:
                        cls = models[o.name] = model_for(o.name)
                    mk = ""
                if cls is not None:
                    # a leaf op's subtree kernels are its own (the usual modelled op): no walk
                    ks = _subtree_kernels(o) if o._ch is not None else o._k
                    if ks or not has_gpu:
                        add_op(o)  # (the usual unit: no call)
                        add_name(o.name)
                        add_ks(ks)
                        add_cls(cls)
                        add_mk(mk)
                    continue
            if o.kernels:
                own, graphs = split_graph_kernels(o.kernels)  # a graph's kernels: its own row
                if own and cat == CPU_OP:
                    add(o, o.name, own)
                elif own:  # annotation: one unit per kind of kernel (comm, compiled ...)
                    for name, _, ks in annotation_units(o, own):
                        add(o, name, ks)
                for launch, ks in graphs:
                    add(launch, launch.name, ks)
            if o.children:
                stack.append(iter(o.children))
                break
        else:
            stack.pop()
    return units


def _subtree_kernels(op) -> list:
    """:meth:`~perfreport.events.Op.subtree_kernels` without its generator walk (the same
    depth-first order: an event, then its children in order)."""
    out: list = []
    stack = [op]
    pop, push, add = stack.pop, stack.extend, out.extend
    while stack:
        o = pop()
        if o.kernels and (o.parent is None or o.cat not in LAUNCH):
            add(o.kernels)
        if o.children:
            push(reversed(o.children))
    return out


def collect_units(tree):
    """Yield (op_or_None, name, kernels, model_cls_or_None) covering every GPU event once: the
    units launched from the CPU side in walk order, then each unlinked GPU event."""
    ops, names, kss, clss, _ = linked_units(tree)
    yield from zip(ops, names, map(as_seq, kss), clss)
    for g in tree.gpu:
        if g.launcher is None:
            yield None, f"(unlinked) {g.name}", [g], None


def sig_codes(name_code: np.ndarray, lens: np.ndarray, n_names: int) -> np.ndarray:
    """int32 kernel-list code of each unit (``name_code``: its kernels' name codes, unit after unit;
    ``lens``: kernels per unit): one per distinct list of names, numbered as first seen."""
    nu = lens.size
    start = np.cumsum(lens, dtype=np.int64 if name_code.size >= 1 << 31 else np.int32) - lens
    raw = np.empty(nu, dtype=np.int64 if n_names + nu >= 1 << 31 else np.int32)  # (no Python int per kernel)
    one = lens == 1  # (most units: the list is its kernel's name)
    raw[one] = name_code[start[one]]
    other = np.flatnonzero(~one)
    base = n_names  # (the other lists' codes: past every name's)
    for k in sorted_unique(lens[other]).tolist():  # per list length: the lists as rows of codes
        us = other[lens[other] == k]
        inv = np.zeros(us.size, dtype=np.int32)
        for j in range(k):  # (a code per distinct row prefix: below the rows' count, no overflow)
            col = name_code[start[us] + j]
            inv = first_seen(inv.astype(np.int64) * max(n_names, 1) + col)[0]
        raw[us] = base + inv
        base += int(inv.max()) + 1
    return first_seen(raw)[0]


__all__ = ["LAUNCH", "collect_units", "linked_units", "sig_codes"]
