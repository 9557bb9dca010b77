"""Grouping for the perf sheets: the units that cover every GPU event once (:mod:`.perf_units`),
grouped by op and arguments, and a bimodal group split by its kernels or layer parity (see
:mod:`.perf`)."""

from __future__ import annotations

from array import array
from itertools import repeat
from operator import is_not

import numpy as np

from perfreport.errors import ModelError
from perfreport.events import CPU_OP, MEMCPY, MEMSET, as_seq, counts_and_flat
from perfreport.models.base import bounds
from perfreport.stats.order import median
from perfreport.tables import flags as fl
from perfreport.tables.kernel_codes import dense_codes, first_codes, first_seen, kinds, listed_codes, looked_up
from perfreport.tables.kernel_codes import name_stream_codes
from perfreport.tables.kernel_codes import uids_of
from perfreport.tables.op_codes import args_codes
from perfreport.tables.op_times import event_columns, release, shared
from perfreport.tables.ops import KernelAcc, kernel_lists, category
from perfreport.tables.perf_units import LAUNCH, collect_units, linked_units, sig_codes
from perfreport.tables.timeline import is_comm


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


_PLAIN, _COPY, _HOST, _COMM = range(4)


def _kind(g) -> int:
    if g.cat == MEMCPY or g.cat == MEMSET:
        return _HOST if fl.is_host_copy(g) else _COPY
    return _COMM if is_comm(g) else _PLAIN


def _group_codes(units: tuple, unlinked: list) -> tuple[np.ndarray, dict, np.ndarray]:
    """(group code of each unit: the linked ``units`` (:func:`~.perf_units.linked_units`), then one
    per ``unlinked`` event; {group key: _Group}, in code order; whether each linked unit has a
    model). A model is evaluated once per
    (op name, argument set, meta key), on its first op; a group is keyed by (name, argument set,
    the model's parameters, its reason), or for an unmodelled unit (name, argument set, None,
    its category: None for a cpu_op, "unlinked" for an unlinked event)."""
    ops, names, kss, clss, mks = units
    n = len(ops)
    aid = args_codes(ops)  # (the same code: the same op.args dict)
    modelled = np.fromiter(map(is_not, clss, repeat(None)), dtype=bool, count=n)
    mod = np.flatnonzero(modelled)
    # the cache key (name, argument set, meta key) of each unit, as one int
    key = first_codes(names)[0]
    for part in (aid, first_codes(mks)[0]):
        key = key.astype(np.int64) * (int(part.max()) + 1 if n else 1) + part
        key = first_seen(key)[0]  # (codes again: the next product stays below n²)
    ck, first = first_seen(key[mod])
    del key
    gindex: dict = {}  # group key -> raw code (in order of first evaluation)
    ck_raw, ck_ev = [], []
    for u in mod[first].tolist():
        e = Eval(clss[u], ops[u])
        ck_raw.append(gindex.setdefault((names[u], int(aid[u]), repr(e.params), e.reason), len(gindex)))
        ck_ev.append(e)
    raw = np.empty(n + len(unlinked), dtype=np.int32)
    unit_ck = np.full(n + 1, -1, dtype=np.int32)  # each unit's cache code (-1: no model; [n]: the unlinked)
    unit_ck[mod] = ck
    raw[mod] = np.asarray(ck_raw, dtype=np.int32)[ck]
    del mod, ck
    for i in np.flatnonzero(~modelled).tolist():
        op = ops[i]
        cat = None if op.cat == CPU_OP else category(op, as_seq(kss[i]))
        raw[i] = gindex.setdefault((names[i], int(aid[i]), None, cat), len(gindex))
    del aid
    if unlinked:
        nc, kn = first_codes([g.name for g in unlinked])
        lut = [gindex.setdefault((f"(unlinked) {k}", 0, None, "unlinked"), len(gindex)) for k in kn]
        raw[n:] = np.asarray(lut, dtype=np.int32)[nc]
    gid, at = first_seen(raw)
    keys = list(gindex)
    groups: dict = {}
    for ix, (r, u) in enumerate(zip(raw[at].tolist(), at.tolist())):
        c = int(unit_ck[min(u, n)])
        grp = groups[keys[r]] = _Group(ops[u] if u < n else None, ck_ev[c] if c >= 0 else None)
        grp.ix = ix
    return gid, groups, modelled


def group_units(tree) -> dict:
    """{group key: _Group} of every unit of :func:`collect_units`.

    The units' codes (group, kernel list) are found per distinct value (:func:`_group_codes`,
    :func:`~.perf_units.sig_codes`); their kernels are laid end to end once; each unit's time and overlap and
    each part's copy / communication / graph time and kernel list are then sums over them with
    ``np.bincount``, which adds in order, as summing per unit did, so the figures are the same."""
    has_gpu = bool(tree.gpu)
    overlapped = fl.cross_stream_overlap_us(tree.gpu) if has_gpu else {}
    release(tree.gpu, fl.OVERLAP)  # (held here alone from now on: freed as group_units returns)
    units = linked_units(tree)
    unlinked = [g for g in tree.gpu if g.launcher is None]
    gid, groups, modelled = _group_codes(units, unlinked)
    unit_ops, kss = units[0], units[2]
    del units  # (the names, models and meta keys are freed here)
    counts, flat = counts_and_flat(kss)  # every unit's kernels, unit after unit
    lens = np.concatenate((np.asarray(counts, dtype=np.int32), np.ones(len(unlinked), dtype=np.int32)))
    flat.extend(unlinked)
    kname, names = listed_codes(flat, "name")  # (in order of first appearance)
    sig = sig_codes(kname, lens, len(names))
    graph_at: list = []  # positions in flat of graph-launched kernels of unmodelled units
    at = 0
    for c, m in zip(counts, modelled.tolist()):
        if not m:  # (an unlinked kernel has no launch call)
            for i in range(at, at + c):
                if "GraphLaunch" in (flat[i].launch_name or ""):
                    graph_at.append(i)
        at += c
    del kss, counts, modelled
    cpu_times = None if has_gpu else [op.dur for op in unit_ops]  # (traces without GPU events)
    unit_ops.extend([None] * len(unlinked))
    del unlinked
    unit_part, parts, members = _parts(list(groups.values()), gid, sig, unit_ops)
    del gid, sig, unit_ops
    knames = [kname, names]
    del kname, names  # (_sums frees the codes once read)
    _sums(flat, knames, lens, unit_part, parts, graph_at, members, overlapped, cpu_times)
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


def _parts(grps: list, gid: np.ndarray, sig: np.ndarray, unit_ops: list):
    """(each unit's part code, the parts, [(group, its unit indices)]), each group's ``sigs``
    and ``parts`` set (see :func:`part_codes`; ``gid``, ``sig``: int32 codes of each unit)."""
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
    ``knames``: [each kernel's name code, the names], emptied here; ``lens``: kernels per unit)."""
    nu, npart = len(lens), len(parts)
    names = knames.pop()
    name_code = knames.pop()  # (the caller's list: the codes are freed below)
    kind = kinds(flat, name_code, len(names), _kind)
    with shared(flat):  # one uid gather for the streams, the overlaps and the columns
        code, keys = name_stream_codes(flat, name_code, names)
        del name_code
        ov_at, ov = looked_up(uids_of(flat), overlapped)
        d, durs = event_columns(flat, {"stream_time": "excl", "dur": "dur"})  # stream time: same-stream overlap once
    unit = np.repeat(np.arange(nu, dtype=np.int32), lens)
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
