"""Grouping for the perf sheets: the units that cover every GPU event once, grouped by op and
arguments, and a bimodal group split by its kernels or layer parity (see :mod:`.perf`)."""

from __future__ import annotations

from array import array
from operator import attrgetter

import numpy as np

from perfreport.errors import ModelError
from perfreport.events import CPU_OP, DRIVER, MEMCPY, MEMSET, RUNTIME
from perfreport.models.base import bounds
from perfreport.models.registry import model_for, model_for_op
from perfreport.stats.order import median
from perfreport.tables import flags as fl
from perfreport.tables.coverage import split_graph_kernels
from perfreport.tables.kernel_codes import dense_codes, kinds, looked_up, name_stream_codes, uids_of
from perfreport.tables.op_times import event_columns, shared
from perfreport.tables.ops import KernelAcc, kernel_lists, annotation_units, category
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

    __slots__ = ("op0", "kacc", "comm", "mcpy", "host", "graph", "host_bytes", "ix")

    def __init__(self, op0, ix: int = 0):
        self.op0 = op0
        self.ix = ix  # its index among the parts of group_units
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
    __slots__ = ("op0", "ev", "times", "overlaps", "sigs", "parts", "ix")

    def __init__(self, op0, ev):
        self.op0, self.ev = op0, ev
        # per instance, as C arrays (8 and 4 bytes an instance, not a Python float / int and a
        # list slot each: at 650 MB of JSON ~150k instances, ~5 MB less at the perf sheets' peak)
        self.times = array("d")  # µs
        self.overlaps = array("d")  # µs while other streams ran
        self.sigs = array("i")  # kernel-list code
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
                # a leaf op's subtree kernels are its own (the usual modelled op): no walk
                ks = o.subtree_kernels() if o.children else (o.kernels or [])
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


def _kind(g) -> int:
    if g.cat == MEMCPY or g.cat == MEMSET:
        return _HOST if fl.is_host_copy(g) else _COPY
    return _COMM if is_comm(g) else _PLAIN


def group_units(tree) -> dict:
    """{group key: _Group} of every unit of :func:`collect_units`.

    The units' kernels are laid end to end once; each unit's time and overlap and each part's
    copy / communication / graph time and kernel list are then sums over them with
    ``np.bincount``, which adds in order, as summing per unit did, so the figures are the same."""
    has_gpu = bool(tree.gpu)
    overlapped = fl.cross_stream_overlap_us(tree.gpu) if has_gpu else {}
    cache: dict = {}
    groups: dict = {}
    sig_ids: dict = {}  # kernel names of a unit -> its kernel-list code
    sig_names: list = []  # kernel-list code -> its kernels' name codes
    name_ids: dict = {}  # kernel name -> name code
    names = attrgetter("name")
    # (per unit and per kernel: C arrays, not Python ints, to keep the peak down)
    flat: list = []  # every unit's kernels, unit after unit
    kname = array("i")  # and their name codes
    lens = array("i")  # kernels per unit
    cpu_times: list = []  # per unit: the op's duration (traces without GPU events)
    gids = array("i")  # group code of each unit (its group's position in groups)
    sigs = array("i")  # kernel-list code of each unit
    unit_ops: list = []  # each unit's op (a part's op0 is its first unit's)
    graph_at: list = []  # positions in flat of graph-launched kernels of unmodelled units
    for op, name, ks, cls in collect_units(tree):
        ev = None
        if cls is not None:
            args = id(op.args)
            got = cache.get((name, args, _meta_key(op)))
            if got is None:
                e = Eval(cls, op)
                got = cache[name, args, _meta_key(op)] = (e, repr(e.params))
            ev = got[0]
            gkey = (name, args, got[1], ev.reason)
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
            grp.ix = len(groups) - 1
        kt = tuple(map(names, ks))
        sig = sig_ids.get(kt)
        if sig is None:
            sig = sig_ids[kt] = len(sig_names)
            sig_names.append(array("i", [name_ids.setdefault(n, len(name_ids)) for n in kt]))
        kname.extend(sig_names[sig])
        if cls is None and op is not None:  # (an unlinked kernel has no launch call)
            for i, g in enumerate(ks):
                if "GraphLaunch" in (g.launch_name or ""):
                    graph_at.append(len(flat) + i)
        gids.append(grp.ix)
        sigs.append(sig)
        unit_ops.append(op)
        lens.append(len(ks))
        flat.extend(ks)
        if not has_gpu:
            cpu_times.append(op.dur)
    del sig_ids, sig_names
    unit_part, parts, members = _parts(list(groups.values()), gids, sigs, unit_ops)
    del gids, sigs, unit_ops
    knames = [np.frombuffer(kname, dtype=np.int32) if len(kname) else np.zeros(0, dtype=np.int32), list(name_ids)]
    del kname
    _sums(
        flat,
        knames,
        lens,
        unit_part,
        parts,
        graph_at,
        members,
        overlapped,
        cpu_times if not has_gpu else None,
    )
    return groups


def part_codes(gid: np.ndarray, sig: np.ndarray) -> tuple:
    """(part code of each unit, each part's first unit and parity, the units in group order): for each
    unit's group code ``gid`` and kernel-list code ``sig``. A part is the units of one group
    with one kernel list and one layer parity (the parity of the unit's index among its
    group's units); parts are numbered in order of first appearance, as a dict filled unit by
    unit numbers them. "Group order": by group code, in unit order within a group."""
    n = gid.size
    by_group = np.argsort(gid, kind="stable").astype(np.int32)
    g = gid[by_group]
    start = np.flatnonzero(np.concatenate(([True], g[1:] != g[:-1]))) if n else np.zeros(0, dtype=np.intp)
    del g
    pos = np.arange(n, dtype=np.int32)  # (int32 and int8 arrays: this runs beside the units' kernels)
    pos -= np.repeat(start, np.diff(np.append(start, n))).astype(np.int32)  # index within its group
    parity = np.empty(n, dtype=np.int8)
    parity[by_group] = pos & 1
    del pos
    nsig = int(sig.max()) + 1 if n else 1
    m = (int(gid.max()) + 1 if n else 1) * 2 * nsig
    key = gid.astype(np.int64 if m >= 1 << 31 else np.int32)
    key *= 2
    key += parity
    key *= nsig
    key += sig
    code, distinct = dense_codes(key, m)  # (ascending keys)
    del key
    first = np.full(distinct.size, n, dtype=np.int64)
    np.minimum.at(first, code, np.arange(n, dtype=np.int64))
    order = np.argsort(first, kind="stable")  # renumbered in order of first appearance
    rank = np.empty(distinct.size, dtype=np.int32)
    rank[order] = np.arange(distinct.size, dtype=np.int32)
    first = first[order]
    return rank[code], first, parity[first], by_group


def _parts(grps: list, gids: array, sigs: array, unit_ops: list):
    """(each unit's part code, the parts, [(group, its unit indices)]), each group's ``sigs``
    and ``parts`` set (see :func:`part_codes`)."""
    gid = np.frombuffer(gids, dtype=np.int32) if len(gids) else np.zeros(0, dtype=np.int32)
    sig = np.frombuffer(sigs, dtype=np.int32) if len(sigs) else np.zeros(0, dtype=np.int32)
    code, first, parity, by_group = part_codes(gid, sig)
    parts: list = []
    for ix, (u, par) in enumerate(zip(first.tolist(), parity.tolist())):
        p = _Part(unit_ops[u], ix)
        grps[gid[u]].parts[(int(sig[u]), par)] = p
        parts.append(p)
    unit_ops.clear()  # (the caller's list: nothing reads it after this)
    members = []
    bounds = np.searchsorted(gid[by_group], np.arange(len(grps) + 1))
    for grp, a, b in zip(grps, bounds[:-1].tolist(), bounds[1:].tolist()):
        idx = by_group[a:b].astype(np.int32)
        grp.sigs = array("i", sig[idx].tobytes())
        members.append((grp, array("i", idx.tobytes())))
        grp.times = members[-1][1]  # unit indices for now; their times in _sums
    return code, parts, members


def _sums(flat, knames, lens, unit_part, parts, graph_at, members, overlapped, cpu_times) -> None:
    """Fill each group's per-instance times and overlaps and each part's sums (see group_units;
    ``knames``: [each kernel's name code, the names], emptied here)."""
    nu, npart = len(lens), len(parts)
    names = knames.pop()
    name_code = knames.pop()  # (the caller's list: the codes are freed below)
    kind = kinds(flat, name_code, len(names), _kind)
    with shared(flat):  # one uid gather for the streams, the overlaps and the columns
        code, keys = name_stream_codes(flat, name_code, names)
        del name_code
        ov_at, ov = looked_up(uids_of(flat), overlapped)
        d, durs = event_columns(flat, {"stream_time": "excl", "dur": "dur"})  # stream time: same-stream overlap once
    unit = np.repeat(np.arange(nu, dtype=np.int32), np.frombuffer(lens, dtype=np.int32))
    pk = unit_part[unit]
    dv = d[ov_at]
    ov = np.where(dv < ov, dv, ov)  # its stream time caps what it is charged (min(ov, d), ov on ties)
    del dv
    host_bytes: list = [0.0] * npart  # Σ recorded bytes of a part's host copies; None: one unrecorded
    for i in np.flatnonzero(kind == _HOST).tolist():
        p, nb = pk[i], flat[i].nbytes
        host_bytes[p] = None if nb is None or host_bytes[p] is None else host_bytes[p] + nb
    flat.clear()  # (the caller's list: nothing reads it after this)
    times = np.bincount(unit, weights=d, minlength=nu) if cpu_times is None else None
    # (in kernel order, as a dense column with zeros elsewhere would add: the same sums)
    overl = np.bincount(unit[ov_at], weights=ov, minlength=nu)
    overl = overl.astype(np.float64, copy=False)  # (bincount of no weights at all counts in int64)
    del unit, ov_at
    for grp, idx in members:
        at = np.frombuffer(idx, dtype=np.int32)
        grp.times = array("d", times[at].tobytes()) if times is not None else [cpu_times[u] for u in idx]
        grp.overlaps = array("d", overl[at].tobytes())
    del times, overl, ov, members

    graph_idx = np.asarray(graph_at, dtype=np.intp)
    masks = (kind == _COMM, (kind == _COPY) | (kind == _HOST), kind == _HOST, graph_idx)
    comm, mcpy, host, graph = (np.bincount(pk[m], weights=d[m], minlength=npart).tolist() for m in masks)
    del kind, d, masks
    acc = kernel_lists(pk, code, durs, keys, npart)
    for i, p in enumerate(parts):
        p.comm, p.mcpy, p.host, p.graph, p.host_bytes = comm[i], mcpy[i], host[i], graph[i], host_bytes[i]
        p.kacc.acc = acc[i]


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
                f"{len(ts)} of {len(t)} instances, median {median(ts):.3g} µs",
            )
        )
    return out


__all__ = ["Eval", "LAUNCH", "collect_units", "group_units", "link_bytes", "split_group"]
