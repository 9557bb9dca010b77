"""Grouping for the perf sheets: the units that cover every GPU event once, grouped by op and
arguments, and a bimodal group split by its kernels or layer parity (see :mod:`.perf`)."""

from __future__ import annotations

from operator import attrgetter

import numpy as np

from perfreport.errors import ModelError
from perfreport.events import CPU_OP, DRIVER, MEMCPY, MEMSET, RUNTIME
from perfreport.models.base import bounds
from perfreport.models.registry import model_for, model_for_op
from perfreport.tables import flags as fl
from perfreport.tables.coverage import split_graph_kernels
from perfreport.tables.ops import KernelAcc, annotation_units, category
from perfreport.tables.timeline import is_comm

LAUNCH = (RUNTIME, DRIVER)


class Eval:
    """A model evaluated on one op: params, flops, bytes, bounds, assumptions, spec, or a reason."""

    __slots__ = (
        "model",
        "category",
        "params",
        "flops",
        "bytes",
        "spec",
        "reason",
        "bounds",
        "assumptions",
        "window_ruled_out",
        "spec_bounds",
    )

    def __init__(self, cls, op):
        self.model = cls.__name__
        self.category = cls.category
        self.params = {}
        self.flops = self.bytes = self.bounds = None
        self.assumptions: list[str] = []
        self.spec = ""
        self.reason = ""
        self.window_ruled_out = False  # the model knows the attention window (flags.above_roofline)
        self.spec_bounds = None  # (fast, slow) peaks when the math is an assumption (models/kernel_precision.py)
        try:
            m = cls(op)
            self.category = m.category  # a model may refine its category per op
            self.params = dict(m.params())
            self.flops = float(m.flops())
            b = m.bytes()
            self.bytes = None if b is None else float(b)
            self.spec = m.compute_spec()
            self.assumptions = [a.text for a in m.assumptions()]
            self.window_ruled_out = bool(m.window_ruled_out)
            sb = getattr(m, "compute_spec_bounds", None)
            self.spec_bounds = sb() if sb is not None else None
            if self.bytes is not None:
                self.bounds = bounds(m, self.flops, self.bytes)
        except ModelError as exc:
            self.reason = str(exc)
        except Exception as exc:  # a model bug must not lose the row: show it
            self.reason = f"model failed: {type(exc).__name__}: {exc}"


class _Part:
    """Instances of a group that share a kernel list and a layer parity."""

    __slots__ = ("op0", "kacc", "comm", "mcpy", "host", "graph", "host_bytes")

    def __init__(self, op0):
        self.op0 = op0
        self.kacc = KernelAcc()
        self.comm = self.mcpy = self.host = self.graph = 0.0
        self.host_bytes: float | None = 0.0  # Σ recorded bytes of its host copies; None: one unrecorded


def link_bytes(parts, n: int, model_bytes: float) -> tuple[float, str]:
    """(bytes per call that cross the host link, how they were found). A host<->device copy's
    bytes cross the link once: the bytes its memcpy events record (Kineto writes CUPTI's
    ``bytes`` on every memcpy event: pytorch/kineto libkineto/src/CuptiActivity.cpp,
    ``GpuActivity<CUpti_ActivityMemcpy>::metadataJson``) per call, else half the model's read + write bytes (the source read
    once and the destination written once are the same data)."""
    rec = [p.host_bytes for p in parts]
    if n and rec and all(b is not None for b in rec) and sum(rec) > 0:
        return float(sum(rec)) / n, "the copies' recorded bytes"
    return model_bytes / 2.0, "half the read + write bytes (no bytes recorded on the copies)"


class _Group:
    __slots__ = ("op0", "ev", "times", "overlaps", "sigs", "parts")

    def __init__(self, op0, ev):
        self.op0, self.ev = op0, ev
        self.times: list[float] = []
        self.overlaps: list[float] = []  # per instance: µs while other streams ran
        self.sigs: list[int] = []
        self.parts: dict = {}


def _meta_key(op) -> str:
    m = op.perf_meta
    return repr(sorted(m.items())) if m else ""


def collect_units(tree):
    """Yield (op_or_None, name, kernels, model_cls_or_None) covering every GPU event once."""
    models: dict = {}  # op name -> model_for(name), for ops without perf_meta (the registry is fixed here)
    for root in tree.roots:
        stack = [root]
        while stack:
            o = stack.pop()
            cat = o.cat
            if cat in LAUNCH:
                if o.parent is None and o.kernels:
                    yield o, o.name, o.kernels, None
                if o.children:  # ops nested in a launch call (rare) own theirs
                    stack.extend(reversed(o.children))
                continue
            cls = None
            if cat == CPU_OP:
                meta = o.perf_meta
                if meta:
                    cls = model_for_op(o.name, meta)
                else:
                    cls = models.get(o.name, models)
                    if cls is models:
                        cls = models[o.name] = model_for(o.name)
            if cls is not None:
                ks = o.subtree_kernels()
                if ks or not tree.gpu:
                    yield o, o.name, ks, cls
                continue
            if o.kernels:
                own, graphs = split_graph_kernels(o.kernels)  # a graph's kernels: its own row
                if own and cat == CPU_OP:
                    yield o, o.name, own, None
                elif own:  # annotation: one unit per kind of kernel (comm, compiled ...)
                    for name, _, ks in annotation_units(o, own):
                        yield o, name, ks, None
                for launch, ks in graphs:
                    yield launch, launch.name, ks, None
            if o.children:
                stack.extend(reversed(o.children))
    for g in tree.gpu:
        if g.launcher is None:
            yield None, f"(unlinked) {g.name}", [g], None


_PLAIN, _COPY, _HOST, _COMM = range(4)


def _event(g, overlapped: dict) -> tuple:
    """What the grouping reads of one GPU event, read once: (stream time, kind, µs charged
    while other streams ran, launched by a graph launch, (name, stream), dur, bytes)."""
    d = g.stream_time  # same-stream overlap counted once
    if g.cat == MEMCPY or g.cat == MEMSET:
        kind = _HOST if fl.is_host_copy(g) else _COPY
    else:
        kind = _COMM if is_comm(g) else _PLAIN
    o = overlapped.get(g.uid)
    ovl = 0.0 if o is None else min(o, d)  # its stream time caps what it is charged
    return d, kind, ovl, "GraphLaunch" in (g.launch_name or ""), (g.name, g.stream), g.dur, g.nbytes


def group_units(tree) -> dict:
    """{group key: _Group} of every unit of :func:`collect_units`.

    Each GPU event's fields are read once (:func:`_event`, by identity); a unit's time, its
    part's copy / communication / graph time and kernel list are then sums over its kernels in
    their order (the same additions as summing each field per unit, so the same figures)."""
    has_gpu = bool(tree.gpu)
    overlapped = fl.cross_stream_overlap_us(tree.gpu) if has_gpu else {}
    events: dict = {}
    cache: dict = {}
    groups: dict = {}
    sig_ids: dict = {}
    names = attrgetter("name")
    for op, name, ks, cls in collect_units(tree):
        ev = None
        if cls is not None:
            k = (name, id(op.args), _meta_key(op))
            got = cache.get(k)
            if got is None:
                e = Eval(cls, op)
                got = cache[k] = (e, repr(e.params))
            ev = got[0]
            gkey = (name, id(op.args), got[1], ev.reason)
        else:
            gkey = (
                name,
                id(op.args) if op is not None else 0,
                None,
                "unlinked" if op is None else None if op.cat == CPU_OP else category(op, ks),
            )
        grp = groups.get(gkey)
        if grp is None:
            grp = groups[gkey] = _Group(op, ev)
        sig = sig_ids.setdefault(tuple(map(names, ks)), len(sig_ids))
        pkey = (sig, len(grp.times) % 2)
        part = grp.parts.get(pkey)
        if part is None:
            part = grp.parts[pkey] = _Part(op)
        acc = part.kacc.acc
        t = 0
        ovl = 0.0
        for g in ks:
            e = events.get(id(g))
            if e is None:
                e = events[id(g)] = _event(g, overlapped)
            d, kind, ov, graph, nsk, dur, nb = e
            t += d
            a = acc.get(nsk)  # KernelAcc.add
            if a is None:
                acc[nsk] = [1, dur]
            else:
                a[0] += 1
                a[1] += dur
            if kind:
                if kind == _COMM:
                    part.comm += d
                else:
                    part.mcpy += d
                    if kind == _HOST:
                        part.host += d
                        part.host_bytes = None if nb is None or part.host_bytes is None else part.host_bytes + nb
            ovl += ov
            if graph and cls is None:
                part.graph += d
        grp.times.append((t if ks else 0.0) if has_gpu else op.dur)  # op_times.kernel_time
        grp.sigs.append(sig)
        grp.overlaps.append(ovl)
    return groups


def split_group(grp: _Group):
    """[(times, overlaps, parts, split flag or "")] for one group: itself, or its bimodal clusters."""
    t = grp.times
    cut = fl.bimodal_cut(t)
    if cut is None:
        return [(t, grp.overlaps, list(grp.parts.values()), "")]
    parity = [i % 2 for i in range(len(t))]
    how = fl.split_key(t, grp.sigs, parity, cut)
    if how is None:
        return [
            (
                t,
                grp.overlaps,
                list(grp.parts.values()),
                fl.bimodal_text(t, cut) + "; no kernel list or layer parity separates them",
            )
        ]
    what, key = how
    split = []
    for v in sorted(set(key)):
        ts = [x for x, k in zip(t, key) if k == v]
        ovs = [x for x, k in zip(grp.overlaps, key) if k == v]
        parts = [p for (sig, par), p in grp.parts.items() if (sig if what == "kernels" else par) == v]
        split.append((v, ts, ovs, parts, {n for p in parts for n, _ in p.kacc.acc}))
    shared = set.intersection(*(names for *_, names in split))
    out = []
    for v, ts, ovs, parts, names in split:
        if what == "layer parity":
            label = f"the {'even' if v == 0 else 'odd'} instances (layer parity)"
        else:
            own = sorted(names - shared)
            label = "kernels " + ", ".join(n[:60] for n in own) if own else "no kernels of its own"
        out.append(
            (
                ts,
                ovs,
                parts,
                f"{fl.bimodal_text(t, cut)}; split by {what}: this part is {label}: "
                f"{len(ts)} of {len(t)} instances, median {np.median(ts):.3g} µs",
            )
        )
    return out


__all__ = ["Eval", "LAUNCH", "collect_units", "group_units", "link_bytes", "split_group"]
