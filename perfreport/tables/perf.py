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
clusters (:mod:`perfreport.tables.flags`; the grouping is :mod:`.perf_groups`). Units are SI: ``GFLOP`` = 1e9 FLOP,
``data moved (MB)`` = 1e6 bytes, ``TB/s`` = 1e12 B/s, per call.

Roofline range: ``roofline time min/max (µs)`` are the roofline at the model's assumption
bounds (``perfreport.models.base.bounds``: FLOPs and bytes at the low and high ends of every
unknown); ``roofline % min/max`` are the mean over instances of those times / measured time.
Rows without an unknown have both equal to the point figure. A row whose time is mostly
host<->device copies is judged against the spec's host link (``host_link_gbps``), not HBM, on
the bytes that cross it once (:func:`.perf_groups.link_bytes`: the copies' recorded bytes, else
half the model's read + write). A row above 100% with no cause that covers the excess
(:func:`perfreport.tables.flags.above_roofline`) keeps its figures but is counted under
``model inputs suspect``, not ``modelled``.
``flags`` says what is odd about a row; ``coverage`` says whether it is modelled, and if not why
(:mod:`perfreport.tables.coverage`). Traces without GPU events use the ops' CPU durations.
"""

from __future__ import annotations

from msgspec.structs import replace
import math

import numpy as np

from perfreport.events import CPU_OP
from perfreport.read.schema import SHAPE_KEYS  # what record_shapes=True writes on every cpu_op
from perfreport.stats.order import median
from perfreport.tables import columns as C
from perfreport.tables import coverage as cv
from perfreport.tables import flags as fl
from perfreport.tables.columns import INT, PCT, US
from perfreport.tables.coverage import GRAPH_CATEGORY, graph_reason, is_graph_launch
from perfreport.tables.kernel_codes import first_codes, first_seen
from perfreport.tables.launcher_codes import unlinked
from perfreport.tables.op_times import event_columns, remembered, shared
from perfreport.tables.ops import KernelAcc, category
from perfreport.tables.perf_groups import LAUNCH, group_units, link_bytes, split_group
from perfreport.tables.sheet import Sheet, fmt_dims, fmt_list, rank


class RowInput:
    """What one row of the perf sheets is built from: a group (or one of its split parts)."""

    __slots__ = ("name", "op0", "ev", "times", "overlaps", "parts", "split_flag", "ucat")

    def __init__(self, name, op0, ev, times, overlaps, parts, split_flag, ucat):
        self.name = name  # str
        self.op0 = op0  # the group's first op (None: unlinked kernels)
        self.ev = ev  # the model evaluated on it (Eval; None: no model)
        self.times = times  # per-instance times (µs)
        self.overlaps = overlaps  # per instance: µs while other streams ran
        self.parts = parts  # the _Part values the row covers
        self.split_flag = split_flag  # the bimodal flag text, "" when not split
        self.ucat = ucat  # category of an unmodelled unit (annotation kinds), or None


class TableContext:
    """What every row of one trace shares."""

    __slots__ = ("spec", "has_gpu", "graph_why")

    def __init__(self, spec, has_gpu: bool, graph_why: str):
        self.spec = spec  # the GPU spec, or None
        self.has_gpu = has_gpu
        self.graph_why = graph_why  # reason text of a graph replay without shapes


def _reason(op, ev, parts, total: float, spec) -> str:
    """The coverage reason of an unmodelled row."""
    if op is None:
        return cv.UNLINKED
    if ev is not None:
        if ev.reason and not any(k in (op.args or {}) for k in SHAPE_KEYS):
            return cv.NO_SHAPES  # record_shapes=True writes these on every cpu_op
        return cv.MODEL_ERROR if ev.reason else cv.NO_ROOFLINE
    if total and sum(p.graph for p in parts) >= 0.5 * total:
        return cv.GRAPH
    if op.cat in LAUNCH:
        return cv.OUTSIDE
    if op.cat != CPU_OP:
        return cv.ANNOTATION
    return cv.NO_MODEL


def _specs(spec, ev) -> tuple[str, str, str]:
    """(point, fast, slow) compute specs of a row: the model's, and the peaks of its math
    assumption (``compute_spec_bounds``: TF32 ... FP32). A peak the GPU lacks (V100, CDNA2 have
    no TF32) falls back to the other end, so the range collapses onto the peak that exists. A
    data-movement row (0 FLOP) never reaches its peak: one the GPU lacks (V100 has no BF16) is read
    at vector_fp32."""
    if not ev.spec_bounds:
        moves = ev.category == "DataMovement" and not ev.flops
        s = "vector_fp32" if moves and not spec.peaks.get(ev.spec) else ev.spec
        return s, s, s
    fast, slow = ev.spec_bounds
    fast = fast if spec.peaks.get(fast) else slow
    slow = slow if spec.peaks.get(slow) else fast
    point = ev.spec if spec.peaks.get(ev.spec) else slow
    return point, fast, slow


def _row(u: RowInput, ctx: TableContext) -> dict:
    from perfreport.specs import roofline

    name, op0, ev, times, overlaps, parts = u.name, u.op0, u.ev, u.times, u.overlaps, u.parts
    split_flag, ucat, spec, has_gpu = u.split_flag, u.ucat, ctx.spec, ctx.has_gpu
    graph_why = ctx.graph_why

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
        C.TIME_MEDIAN_US: float(median(t)),
        C.TIME_STD_US: float(t.std(ddof=1)) if len(t) > 1 else 0.0,
        C.TIME_MIN_US: float(t.min()),
        C.TIME_MAX_US: float(t.max()),
    }
    flags = [split_flag] if split_flag else []
    host = sum(p.host for p in parts)
    suspect = False
    if ev is not None and not ev.reason:
        f, by = ev.flops, ev.bytes
        pos = t > 0
        pos = True if t.size and pos.all() else pos  # (True: every instance took time, the usual)
        r[C.GFLOP] = f / 1e9
        r[C.COMPUTE_SPEC] = ev.spec
        flags += fl.assumption_texts(ev.assumptions)
        link = spec is not None and by is not None and has_gpu and total > 0 and host >= 0.5 * total
        link = link and spec.host_link_gbps
        if link:  # a host copy: its bytes cross the link once
            by, how = link_bytes(parts, len(t), by)
        r[C.DATA_MOVED_MB] = by / 1e6 if by is not None else None
        r[C.FLOP_PER_BYTE] = f / by if by else None
        if pos is True:  # (every time > 0: no NaN to put in, nothing to divide by zero)
            r[C.TFLOP_PER_S_MEAN] = float(np.mean(f / (t * 1e6)))
            r[C.TB_PER_S_MEAN] = float(np.mean(by / (t * 1e6))) if by is not None else None
        else:
            with np.errstate(divide="ignore", invalid="ignore"):
                r[C.TFLOP_PER_S_MEAN] = float(np.mean(np.where(pos, f / (t * 1e6), np.nan))) if pos.any() else None
                r[C.TB_PER_S_MEAN] = (
                    float(np.mean(np.where(pos, by / (t * 1e6), np.nan))) if by is not None and pos.any() else None
                )
        if spec is not None and by is not None:
            sp = spec
            f_lo, f_hi, b_lo, b_hi = ev.bounds
            if link:
                sp = replace(spec, mem_bw_tbps=spec.host_link_gbps / 1000.0)
                b_lo = b_hi = by
                flags.append(fl.host_link_text(spec.host_link_gbps, how))
            cs, fast, slow = _specs(sp, ev)
            r[C.COMPUTE_SPEC] = cs
            rt, bound = roofline(sp, f, by, cs)
            if rt is not None:
                rt_lo, rt_hi = roofline(sp, f_lo, b_lo, fast)[0], roofline(sp, f_hi, b_hi, slow)[0]
                r[C.ROOFLINE_TIME_US] = rt
                r[C.BOUND] = "host link" if link and bound == "memory" else bound
                pct = _roofline_pcts(r, t, pos, rt, rt_lo, rt_hi)
                above = pct > 100.0
                if above.any():
                    peak = sp.peaks.get(cs)
                    t_c = f / (peak * 1e12) * 1e6 if peak else None  # the compute term alone, µs
                    text, suspect = fl.above_roofline(
                        n_above=int(above.sum()),
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
                        host_copy=bool(link),
                        compute_pct=float(np.max(t_c / t[above] * 100.0)) if t_c is not None else None,
                        window_ruled_out=ev.window_ruled_out,
                    )
                    flags.insert(0, text)
        for k, v in ev.params.items():
            r[C.param(k)] = _cell(v)
    r[C.FLAGS] = fl.join_flags(flags)
    modelled = r.get(C.ROOFLINE_TIME_US) is not None and not suspect
    if suspect:  # a figure no cause can make true: its time is not counted as modelled
        reason = cv.SUSPECT
    else:
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


def _roofline_pcts(r: dict, t: np.ndarray, pos, rt: float, rt_lo: float, rt_hi: float) -> np.ndarray:
    """Set the roofline % columns of row ``r`` (per instance: roofline time / measured time ``t``,
    over the instances that took time, ``pos``: a mask, or True for all of them); return the
    per-instance % (NaN where no time). With every time > 0 and finite roofline times the
    NaN-skipping reductions read as the plain ones (the same sums, in the same order)."""
    r[C.ROOFLINE_TIME_MIN_US], r[C.ROOFLINE_TIME_MAX_US] = rt_lo, rt_hi
    if pos is True and math.isfinite(rt) and math.isfinite(rt_lo) and math.isfinite(rt_hi):
        pct = rt / t * 100.0
        r[C.ROOFLINE_MEAN_PCT] = float(pct.mean())
        r[C.ROOFLINE_MEDIAN_PCT] = float(median(pct))
        r[C.ROOFLINE_MIN_PCT] = float(pct.min())
        r[C.ROOFLINE_MAX_PCT] = float(pct.max())
        r[C.ROOFLINE_STD_PCT] = float(pct.std(ddof=1)) if t.size > 1 else 0.0
        r[C.ROOFLINE_PCT_MIN] = float((rt_lo / t * 100.0).mean())
        r[C.ROOFLINE_PCT_MAX] = float((rt_hi / t * 100.0).mean())
        return pct
    if pos is True:
        pos = np.ones(t.size, dtype=bool)
    safe = np.where(pos, t, 1.0)
    pct = np.where(pos, rt / safe * 100.0, np.nan)
    r[C.ROOFLINE_MEAN_PCT] = float(np.nanmean(pct)) if pos.any() else None
    r[C.ROOFLINE_MEDIAN_PCT] = float(median(pct[~np.isnan(pct)])) if pos.any() else None
    r[C.ROOFLINE_MIN_PCT] = float(np.nanmin(pct)) if pos.any() else None
    r[C.ROOFLINE_MAX_PCT] = float(np.nanmax(pct)) if pos.any() else None
    r[C.ROOFLINE_STD_PCT] = float(np.nanstd(pct, ddof=1)) if pos.sum() > 1 else 0.0
    if pos.any():
        r[C.ROOFLINE_PCT_MIN] = float(np.nanmean(np.where(pos, rt_lo / safe * 100.0, np.nan)))
        r[C.ROOFLINE_PCT_MAX] = float(np.nanmean(np.where(pos, rt_hi / safe * 100.0, np.nan)))
    return pct


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
# what a reader looks at first: the workbook's unified sheet and every per-category sheet start
# with these columns, in this order (roofline % among the first columns, not far right)
LEAD_COLS = [
    C.NAME,
    C.CATEGORY,
    C.TIME_SUM_US,
    C.PERCENT_PCT,
    C.ROOFLINE_MEAN_PCT,
    C.BOUND,
    C.FLAGS,
    C.INPUT_DIMS,
]


def perf_tables(tree, spec) -> tuple[list[Sheet], cv.Coverage]:
    """The perf sheets and the report's coverage statement."""
    has_gpu = bool(tree.gpu)
    first_gpu_ts = None  # (unlinked) name -> its first event's start, made for the first unlinked row
    rows = []
    graph_why = graph_reason(tree)
    ctx = TableContext(spec, has_gpu, graph_why)
    for (name, _, _, ucat), grp in group_units(tree).items():
        for ts, ovs, parts, split_flag in split_group(grp):
            u = RowInput(name, grp.op0, grp.ev, ts, ovs, parts, split_flag, ucat if grp.ev is None else None)
            r = _row(u, ctx)
            if r[C.EXAMPLE_TS_US] is None:
                first_gpu_ts = _first_unlinked_ts(tree) if first_gpu_ts is None else first_gpu_ts
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
        rest = [c for c in BASE_COLS if c != C.PERF_MODEL] + [c for c in TAIL_COLS if c != C.COVERAGE]
        cols = LEAD_COLS + pcols + [c for c in rest if c not in LEAD_COLS]
        sheets.append(Sheet.from_records(cat, sub, cols, fm, notes))
    return sheets, coverage


FIRST_UNLINKED = "first unlinked ts"  # (its key among what shared() remembers)


def _first_unlinked_ts(tree) -> dict:
    """``{"(unlinked) <kernel>": start of the first unlinked event of that name}`` (µs); made once
    while :func:`~perfreport.tables.op_times.shared` holds tree.gpu (the unlinked events and
    their uids from :func:`~perfreport.tables.launcher_codes.unlinked`). Read-only."""

    def make():
        un, src_uid = unlinked(tree.gpu)
        code, names = first_codes([g.name for g in un])
        with shared(un, src_uid):
            (ts,) = event_columns(un, {"ts": "ts"})
        return {f"(unlinked) {n}": t for n, t in zip(names, ts[first_seen(code)[1]].tolist())}

    return remembered(tree.gpu, FIRST_UNLINKED, make)


def _cell(v):
    if isinstance(v, (list, tuple)):
        return fmt_dims([v]) if all(isinstance(x, int) for x in v) else ", ".join(map(str, v))
    if isinstance(v, (np.generic,)):
        return v.item()
    return v
