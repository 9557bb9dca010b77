"""Perf sheets: ``unified_perf_summary`` and one sheet per perf-model category.

Unified table: every GPU event is counted exactly once.
* Walking each CPU tree from its root, an op with a perf model (``registry.model_for_op``;
  an op whose ``perf_meta.exclude_perf_model`` is true has none) takes its whole subtree's
  kernels and the walk stops there;
* otherwise an op that launched kernels itself gets a row with its direct kernels, and the
  walk goes on into its children;
* a runtime call outside any op gets a row under its own name;
* an unlinked GPU event gets a row per kernel name (``(unlinked) <kernel>``).
So the table's kernel time sums to the sum of all GPU event durations (tested).

Rows group by op name and arguments (and the model's parameters). A group whose instance times
are bimodal is split by its kernels or by layer parity where one of them separates the two
clusters (:mod:`perfreport.tables.flags`). Units are SI: ``GFLOP`` = 1e9 FLOP,
``data moved (MB)`` = 1e6 bytes, ``TB/s`` = 1e12 B/s, per call.

Roofline range: ``roofline time min/max (µs)`` are the roofline at the model's assumption
bounds (``perfreport.models.base.bounds``: FLOPs and bytes at the low and high ends of every
unknown); ``roofline % min/max`` are the mean over instances of those times / measured time.
Rows without an unknown have both equal to the point figure. A row whose time is mostly
host<->device copies is judged against the spec's host link (``host_link_gbps``), not HBM.
``flags`` says what is odd about a row; ``coverage`` says whether it is modelled, and if not why
(:mod:`perfreport.tables.coverage`). Traces without GPU events use the ops' CPU durations.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from perfreport.errors import ModelError
from perfreport.events import CPU_OP, DRIVER, MEMCPY, MEMSET, RUNTIME
from perfreport.models.base import bounds
from perfreport.models.registry import model_for_op
from perfreport.tables import coverage as cv
from perfreport.tables import flags as fl
from perfreport.tables.coverage import GRAPH_CATEGORY, graph_reason, is_graph_launch, split_graph_kernels
from perfreport.tables.op_times import kernel_time
from perfreport.tables.ops import KernelAcc, annotation_units, category
from perfreport.tables.columns import INT, PCT, US
from perfreport.tables.sheet import Sheet, fmt_dims, fmt_list, rank
from perfreport.tables.timeline import is_comm
from perfreport.tables import columns as C

LAUNCH = (RUNTIME, DRIVER)


class Eval:
    """A model evaluated on one op: params, flops, bytes, bounds, assumptions, spec, or a reason."""

    __slots__ = ("model", "category", "params", "flops", "bytes", "spec", "reason", "bounds", "assumptions")

    def __init__(self, cls, op):
        self.model = cls.__name__
        self.category = cls.category
        self.params = {}
        self.flops = self.bytes = self.bounds = None
        self.assumptions: list[str] = []
        self.spec = ""
        self.reason = ""
        try:
            m = cls(op)
            self.category = m.category  # a model may refine its category per op
            self.params = dict(m.params())
            self.flops = float(m.flops())
            b = m.bytes()
            self.bytes = None if b is None else float(b)
            self.spec = m.compute_spec()
            self.assumptions = [a.text for a in m.assumptions()]
            if self.bytes is not None:
                self.bounds = bounds(m, self.flops, self.bytes)
        except ModelError as exc:
            self.reason = str(exc)
        except Exception as exc:  # a model bug must not lose the row: show it
            self.reason = f"model failed: {type(exc).__name__}: {exc}"


class _Part:
    """Instances of a group that share a kernel list and a layer parity."""

    __slots__ = ("op0", "kacc", "comm", "mcpy", "host", "graph")

    def __init__(self, op0):
        self.op0 = op0
        self.kacc = KernelAcc()
        self.comm = self.mcpy = self.host = self.graph = 0.0


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
    for root in tree.roots:
        stack = [root]
        while stack:
            o = stack.pop()
            if o.cat in LAUNCH:
                if o.parent is None and o.kernels:
                    yield o, o.name, o.kernels, None
                if o.children:  # ops nested in a launch call (rare) own theirs
                    stack.extend(reversed(o.children))
                continue
            cls = model_for_op(o.name, o.perf_meta) if o.cat == CPU_OP else None
            if cls is not None:
                ks = o.subtree_kernels()
                if ks or not tree.gpu:
                    yield o, o.name, ks, cls
                continue
            if o.kernels:
                own, graphs = split_graph_kernels(o.kernels)  # a graph's kernels: its own row
                if own and o.cat == CPU_OP:
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


def _groups(tree) -> dict:
    has_gpu = bool(tree.gpu)
    overlapped = fl.cross_stream_overlap_us(tree.gpu) if has_gpu else {}
    cache: dict = {}
    groups: dict = {}
    sig_ids: dict = {}
    for op, name, ks, cls in collect_units(tree):
        ev = None
        if cls is not None:
            k = (name, id(op.args), _meta_key(op))
            ev = cache.get(k)
            if ev is None:
                ev = cache[k] = Eval(cls, op)
            gkey = (name, id(op.args), repr(ev.params), ev.reason)
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
        sig = sig_ids.setdefault(tuple(g.name for g in ks), len(sig_ids))
        pkey = (sig, len(grp.times) % 2)
        part = grp.parts.get(pkey)
        if part is None:
            part = grp.parts[pkey] = _Part(op)
        grp.times.append(kernel_time(ks) if has_gpu else op.dur)
        grp.sigs.append(sig)
        part.kacc.add(ks)
        ovl = 0.0
        for g in ks:
            d = g.stream_time  # same-stream overlap counted once
            if g.cat == MEMCPY or g.cat == MEMSET:
                part.mcpy += d
                if fl.is_host_copy(g):
                    part.host += d
            elif is_comm(g):
                part.comm += d
            if g.uid in overlapped:
                ovl += min(overlapped[g.uid], d)  # its stream time caps what it is charged
            if cls is None and "GraphLaunch" in (g.launch_name or ""):
                part.graph += d
        grp.overlaps.append(ovl)
    return groups


def _split(grp: _Group):
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


def _reason(op, ev, parts, total: float, spec) -> str:
    """The coverage reason of an unmodelled row."""
    if op is None:
        return cv.UNLINKED
    if ev is not None:
        return cv.MODEL_ERROR if ev.reason else cv.NO_ROOFLINE
    if total and sum(p.graph for p in parts) >= 0.5 * total:
        return cv.GRAPH
    if op.cat in LAUNCH:
        return cv.OUTSIDE
    if op.cat != CPU_OP:
        return cv.ANNOTATION
    return cv.NO_MODEL


def _row(name, op0, ev, times, overlaps, parts, split_flag, spec, has_gpu, graph_why: str, ucat) -> dict:
    from perfreport.specs import roofline

    t = np.array(times)
    a = op0.args if op0 is not None else {}
    total = float(t.sum())
    graph = ev is None and is_graph_launch(op0)  # a graph replay's kernels, shapes unknown
    r = {
        C.NAME: name,
        C.CATEGORY: ev.category if ev else (GRAPH_CATEGORY if graph else ucat or category(op0)),
        C.PERF_MODEL: ev.model if ev else "",
        C.REASON: ev.reason if ev else (graph_why if graph else ""),
        C.INPUT_DIMS: fmt_dims(a.get("Input Dims")),
        C.INPUT_TYPES: fmt_list(a.get("Input type")),
        C.INPUT_STRIDES: fmt_dims(a.get("Input Strides")),
        C.CONCRETE_INPUTS: fmt_list(a.get("Concrete Inputs")),
        C.COUNT: len(t),
        C.TIME_SUM_US: total,
        C.TIME_MEAN_US: float(t.mean()),
        C.TIME_MEDIAN_US: float(np.median(t)),
        C.TIME_STD_US: float(t.std(ddof=1)) if len(t) > 1 else 0.0,
        C.TIME_MIN_US: float(t.min()),
        C.TIME_MAX_US: float(t.max()),
    }
    flags = [split_flag] if split_flag else []
    host = sum(p.host for p in parts)
    if ev is not None and not ev.reason:
        f, by = ev.flops, ev.bytes
        r[C.GFLOP] = f / 1e9
        r[C.DATA_MOVED_MB] = by / 1e6 if by is not None else None
        r[C.FLOP_PER_BYTE] = f / by if by else None
        with np.errstate(divide="ignore", invalid="ignore"):
            r[C.TFLOP_PER_S_MEAN] = float(np.mean(np.where(t > 0, f / (t * 1e6), np.nan))) if (t > 0).any() else None
            r[C.TB_PER_S_MEAN] = (
                float(np.mean(np.where(t > 0, by / (t * 1e6), np.nan))) if by is not None and (t > 0).any() else None
            )
        r[C.COMPUTE_SPEC] = ev.spec
        flags += fl.assumption_texts(ev.assumptions)
        if spec is not None and by is not None:
            sp, link = spec, has_gpu and total > 0 and host >= 0.5 * total and spec.host_link_gbps
            if link:
                sp = dataclasses.replace(spec, mem_bw_tbps=spec.host_link_gbps / 1000.0)
                flags.append(fl.host_link_text(spec.host_link_gbps))
            rt, bound = roofline(sp, f, by, ev.spec)
            if rt is not None:
                f_lo, f_hi, b_lo, b_hi = ev.bounds
                rt_lo, rt_hi = roofline(sp, f_lo, b_lo, ev.spec)[0], roofline(sp, f_hi, b_hi, ev.spec)[0]
                pos = t > 0
                safe = np.where(pos, t, 1.0)
                pct = np.where(pos, rt / safe * 100.0, np.nan)
                r[C.ROOFLINE_TIME_US] = rt
                r[C.BOUND] = "host link" if link and bound == "memory" else bound
                r[C.ROOFLINE_MEAN_PCT] = float(np.nanmean(pct)) if pos.any() else None
                r[C.ROOFLINE_MEDIAN_PCT] = float(np.nanmedian(pct)) if pos.any() else None
                r[C.ROOFLINE_MIN_PCT] = float(np.nanmin(pct)) if pos.any() else None
                r[C.ROOFLINE_MAX_PCT] = float(np.nanmax(pct)) if pos.any() else None
                r[C.ROOFLINE_STD_PCT] = float(np.nanstd(pct, ddof=1)) if pos.sum() > 1 else 0.0
                r[C.ROOFLINE_TIME_MIN_US], r[C.ROOFLINE_TIME_MAX_US] = rt_lo, rt_hi
                if pos.any():
                    r[C.ROOFLINE_PCT_MIN] = float(np.nanmean(np.where(pos, rt_lo / safe * 100.0, np.nan)))
                    r[C.ROOFLINE_PCT_MAX] = float(np.nanmean(np.where(pos, rt_hi / safe * 100.0, np.nan)))
                above = pct > 100.0
                n_above = int(above.sum())
                if n_above:
                    flags.insert(
                        0,
                        fl.above_roofline_causes(
                            n_above=n_above,
                            n=len(t),
                            nbytes=by,
                            llc_bytes=spec.llc_bytes,
                            category=r[C.CATEGORY],
                            bound=r[C.BOUND],
                            above_us=float(t[above].sum()),
                            overlap_us=float(np.asarray(overlaps, dtype=np.float64)[above].sum()),
                            excess_us=float((rt - t[above]).sum()),
                            pct_min=r.get(C.ROOFLINE_PCT_MIN),
                            assumptions=ev.assumptions,
                            model=ev.model,
                        ),
                    )
        for k, v in ev.params.items():
            r[C.param(k)] = _cell(v)
    r[C.FLAGS] = fl.join_flags(flags)
    modelled = r.get(C.ROOFLINE_TIME_US) is not None
    reason = cv.MODELLED if modelled else _reason(op0, ev, parts, total, spec)
    r[C.COVERAGE] = reason
    r["_parts"] = cv.row_parts(
        modelled=modelled,
        total=total,
        comm=sum(p.comm for p in parts),
        memcpy=sum(p.mcpy for p in parts),
        reason=reason,
    )
    acc = KernelAcc()
    for p in parts:
        for k, (c, s) in p.kacc.acc.items():
            a_ = acc.acc.setdefault(k, [0, 0.0])
            a_[0] += c
            a_[1] += s
    r[C.KERNELS] = acc.text() if has_gpu else ""
    # where to find one instance in a trace viewer (Perfetto / chrome://tracing)
    op_first = min((p.op0 for p in parts if p.op0 is not None), key=lambda o: o.ts, default=None)
    r[C.EXAMPLE_TS_US] = op_first.ts if op_first is not None else None
    return r


BASE_COLS = [
    C.NAME,
    C.CATEGORY,
    C.PERF_MODEL,
    C.REASON,
    C.COUNT,
    C.TIME_SUM_US,
    C.TIME_MEAN_US,
    C.TIME_MEDIAN_US,
    C.TIME_STD_US,
    C.TIME_MIN_US,
    C.TIME_MAX_US,
    C.GFLOP,
    C.DATA_MOVED_MB,
    C.FLOP_PER_BYTE,
    C.TFLOP_PER_S_MEAN,
    C.TB_PER_S_MEAN,
    C.COMPUTE_SPEC,
    C.ROOFLINE_TIME_US,
    C.BOUND,
    C.ROOFLINE_MEAN_PCT,
    C.ROOFLINE_MEDIAN_PCT,
    C.ROOFLINE_MIN_PCT,
    C.ROOFLINE_MAX_PCT,
    C.ROOFLINE_STD_PCT,
    C.ROOFLINE_TIME_MIN_US,
    C.ROOFLINE_TIME_MAX_US,
    C.ROOFLINE_PCT_MIN,
    C.ROOFLINE_PCT_MAX,
    C.FLAGS,
]
TAIL_COLS = [C.INPUT_DIMS, C.INPUT_TYPES, C.INPUT_STRIDES, C.CONCRETE_INPUTS, C.COVERAGE, C.KERNELS, C.EXAMPLE_TS_US]


def perf_tables(tree, times, spec) -> tuple[list[Sheet], cv.Coverage]:
    """The perf sheets and the report's coverage statement."""
    has_gpu = bool(tree.gpu)
    first_gpu_ts: dict = {}
    for g in tree.gpu:
        if g.launcher is None:
            first_gpu_ts.setdefault(f"(unlinked) {g.name}", g.ts)
    rows = []
    graph_why = graph_reason(tree)
    for (name, _, _, ucat), grp in _groups(tree).items():
        for ts, ovs, parts, split_flag in _split(grp):
            r = _row(
                name,
                grp.op0,
                grp.ev,
                ts,
                ovs,
                parts,
                split_flag,
                spec,
                has_gpu,
                graph_why,
                ucat if grp.ev is None else None,
            )
            if r[C.EXAMPLE_TS_US] is None:
                r[C.EXAMPLE_TS_US] = first_gpu_ts.get(name)
            rows.append(r)
    coverage = cv.build_coverage(
        rows, has_gpu=has_gpu, hints={cv.GRAPH: cv.GRAPH_HINT} if graph_why == cv.NO_CAPTURE else None
    )

    total = float(sum(r[C.TIME_SUM_US] for r in rows))
    rank(rows, C.TIME_SUM_US, total)
    param_cols: list[str] = []
    for r in rows:
        for c in r:
            if c.startswith(C.PARAM_PREFIX) and c not in param_cols:
                param_cols.append(c)
    fm = {c: US for c in BASE_COLS + TAIL_COLS if "(µs)" in c}
    fm.update({c: PCT for c in BASE_COLS + [C.PERCENT_PCT, C.CUMULATIVE_PERCENT_PCT] if "(%)" in c})
    fm.update(
        {
            C.COUNT: INT,
            C.GFLOP: "0.000000",
            C.DATA_MOVED_MB: "0.000",
            C.FLOP_PER_BYTE: "0.00",
            C.TFLOP_PER_S_MEAN: "0.000",
            C.TB_PER_S_MEAN: "0.000",
            C.ROOFLINE_PCT_MIN: PCT,
            C.ROOFLINE_PCT_MAX: PCT,
        }
    )
    notes = []
    if not has_gpu:
        notes.append("no GPU events: times are CPU op durations, not kernel times")
    if spec is None:
        notes.append("no GPU spec matched: roofline columns are empty (use --arch)")
    else:
        notes.append(f"roofline on {spec.name} ({spec.basis} figures)")
    unified_cols = BASE_COLS + [C.PERCENT_PCT, C.CUMULATIVE_PERCENT_PCT] + TAIL_COLS
    sheets = [Sheet.from_records("unified_perf_summary", rows, unified_cols, fm, notes)]

    by_cat: dict = {}
    for r in rows:
        if r[C.PERF_MODEL]:
            by_cat.setdefault(r[C.CATEGORY], []).append(r)
    for cat in sorted(by_cat):
        sub = by_cat[cat]
        pcols = [c for c in param_cols if any(r.get(c) is not None for r in sub)]
        cols = (
            [C.NAME]
            + pcols
            + [c for c in BASE_COLS if c not in (C.NAME, C.CATEGORY, C.PERF_MODEL)]
            + [C.PERCENT_PCT]
            + [c for c in TAIL_COLS if c != C.COVERAGE]
        )
        sheets.append(Sheet.from_records(cat, sub, cols, fm, notes))
    return sheets, coverage


def perf_sheets(tree, times, spec) -> list[Sheet]:
    return perf_tables(tree, times, spec)[0]


def _cell(v):
    if isinstance(v, (list, tuple)):
        return fmt_dims([v]) if all(isinstance(x, int) for x in v) else ", ".join(map(str, v))
    if isinstance(v, (np.generic,)):
        return v.item()
    return v
