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

Rows group by op name and arguments (and the model's parameters). Units are SI:
``GFLOP`` = 1e9 FLOP, ``data moved (MB)`` = 1e6 bytes, ``TB/s`` = 1e12 B/s, per call.
Traces without GPU events use the ops' CPU durations as the time (labelled in the notes).
"""
from __future__ import annotations

import numpy as np

from perfreport.errors import ModelError
from perfreport.events import CPU_OP, DRIVER, RUNTIME
from perfreport.models.registry import model_for_op
from perfreport.tables.coverage import (GRAPH_CATEGORY, coverage_note, graph_reason,
                                       is_graph_launch, split_graph_kernels)
from perfreport.tables.op_times import kernel_time
from perfreport.tables.ops import KernelAcc, annotation_units, category
from perfreport.tables.sheet import INT, PCT, US, Sheet, fmt_dims, fmt_list, rank

LAUNCH = (RUNTIME, DRIVER)


class Eval:
    """A model evaluated on one op: params, flops, bytes, compute spec, or a reason."""
    __slots__ = ("model", "category", "params", "flops", "bytes", "spec", "reason")

    def __init__(self, cls, op):
        self.model = cls.__name__
        self.category = cls.category
        self.params = {}
        self.flops = self.bytes = None
        self.spec = ""
        self.reason = ""
        try:
            m = cls(op)
            self.category = m.category          # a model may refine its category per op
            self.params = dict(m.params())
            self.flops = float(m.flops())
            b = m.bytes()
            self.bytes = None if b is None else float(b)
            self.spec = m.compute_spec()
        except ModelError as exc:
            self.reason = str(exc)
        except Exception as exc:  # a model bug must not lose the row: show it
            self.reason = f"model failed: {type(exc).__name__}: {exc}"


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
                if o.children:               # ops nested in a launch call (rare) own theirs
                    stack.extend(reversed(o.children))
                continue
            cls = model_for_op(o.name, o.perf_meta) if o.cat == CPU_OP else None
            if cls is not None:
                ks = o.subtree_kernels()
                if ks or not tree.gpu:
                    yield o, o.name, ks, cls
                continue
            if o.kernels:
                own, graphs = split_graph_kernels(o.kernels)   # a graph's kernels: its own row
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


def perf_sheets(tree, times, spec) -> list[Sheet]:
    from perfreport.specs import roofline
    has_gpu = bool(tree.gpu)
    cache: dict = {}
    groups: dict = {}
    for op, name, ks, cls in collect_units(tree):
        ev = None
        if cls is not None:
            k = (name, id(op.args), _meta_key(op))
            ev = cache.get(k)
            if ev is None:
                ev = cache[k] = Eval(cls, op)
            gkey = (name, id(op.args), repr(ev.params), ev.reason)
        else:
            gkey = (name, id(op.args) if op is not None else 0, None,
                    "unlinked" if op is None else None if op.cat == CPU_OP else category(op, ks))
        grp = groups.get(gkey)
        if grp is None:                  # [first op, eval, times, kernel accumulator]
            grp = groups[gkey] = [op, ev, [], KernelAcc()]
        grp[2].append(kernel_time(ks) if has_gpu else op.dur)
        grp[3].add(ks)

    first_gpu_ts: dict = {}
    for g in tree.gpu:
        if g.launcher is None:
            first_gpu_ts.setdefault(f"(unlinked) {g.name}", g.ts)
    rows = []
    for (name, _, _, ucat), (op0, ev, times_, kacc) in groups.items():
        t = np.array(times_)
        a = op0.args if op0 is not None else {}
        graph = ev is None and is_graph_launch(op0)
        r = {"name": name,
             "category": ev.category if ev else (GRAPH_CATEGORY if graph else
                                                 ucat or category(op0)),
             "perf model": ev.model if ev else "",
             "reason": ev.reason if ev else (graph_reason(tree) if graph else ""),
             "input dims": fmt_dims(a.get("Input Dims")), "input types": fmt_list(a.get("Input type")),
             "input strides": fmt_dims(a.get("Input Strides")),
             "concrete inputs": fmt_list(a.get("Concrete Inputs")),
             "count": len(t), "time sum (µs)": float(t.sum()), "time mean (µs)": float(t.mean()),
             "time median (µs)": float(np.median(t)),
             "time std (µs)": float(t.std(ddof=1)) if len(t) > 1 else 0.0,
             "time min (µs)": float(t.min()), "time max (µs)": float(t.max())}
        if ev is not None and not ev.reason:
            fl, by = ev.flops, ev.bytes
            r["GFLOP"] = fl / 1e9
            r["data moved (MB)"] = by / 1e6 if by is not None else None
            r["FLOP/byte"] = fl / by if by else None
            with np.errstate(divide="ignore", invalid="ignore"):
                r["TFLOP/s mean"] = float(np.mean(np.where(t > 0, fl / (t * 1e6), np.nan))) if (t > 0).any() else None
                r["TB/s mean"] = float(np.mean(np.where(t > 0, by / (t * 1e6), np.nan))) if by is not None and (t > 0).any() else None
            r["compute spec"] = ev.spec
            if spec is not None and by is not None:
                rt, bound = roofline(spec, fl, by, ev.spec)
                if rt is not None:
                    pct = np.where(t > 0, rt / np.where(t > 0, t, 1) * 100.0, np.nan)
                    r["roofline time (µs)"] = rt
                    r["bound"] = bound
                    r["roofline mean (%)"] = float(np.nanmean(pct))
                    r["roofline median (%)"] = float(np.nanmedian(pct))
                    r["roofline min (%)"] = float(np.nanmin(pct))
                    r["roofline max (%)"] = float(np.nanmax(pct))
                    r["roofline std (%)"] = float(np.nanstd(pct, ddof=1)) if len(pct) > 1 else 0.0
            for k, v in ev.params.items():
                r[f"param: {k}"] = _cell(v)
        r["kernels"] = kacc.text() if has_gpu else ""
        # where to find one instance in a trace viewer (Perfetto / chrome://tracing)
        r["example ts (µs)"] = op0.ts if op0 is not None else first_gpu_ts.get(name)
        rows.append(r)

    base_cols = ["name", "category", "perf model", "reason", "count", "time sum (µs)", "time mean (µs)",
                 "time median (µs)", "time std (µs)", "time min (µs)", "time max (µs)", "GFLOP",
                 "data moved (MB)", "FLOP/byte", "TFLOP/s mean", "TB/s mean", "compute spec",
                 "roofline time (µs)", "bound", "roofline mean (%)", "roofline median (%)",
                 "roofline min (%)", "roofline max (%)", "roofline std (%)"]
    tail_cols = ["input dims", "input types", "input strides", "concrete inputs", "kernels", "example ts (µs)"]
    total = float(sum(r["time sum (µs)"] for r in rows))
    rank(rows, "time sum (µs)", total)
    param_cols: list[str] = []
    for r in rows:
        for c in r:
            if c.startswith("param: ") and c not in param_cols:
                param_cols.append(c)
    fm = {c: US for c in base_cols + tail_cols if "(µs)" in c}
    fm.update({c: PCT for c in base_cols + ["percent (%)", "cumulative percent (%)"] if "(%)" in c})
    fm.update({"count": INT, "GFLOP": "0.000000", "data moved (MB)": "0.000", "FLOP/byte": "0.00",
               "TFLOP/s mean": "0.000", "TB/s mean": "0.000"})
    notes = []
    if not has_gpu:
        notes.append("no GPU events: times are CPU op durations, not kernel times")
    if spec is None:
        notes.append("no GPU spec matched: roofline columns are empty (use --arch)")
    else:
        notes.append(f"roofline on {spec.name} ({spec.basis} figures)")
    if has_gpu:
        notes.append(coverage_note(rows, total))
    unified_cols = base_cols + ["percent (%)", "cumulative percent (%)"] + tail_cols
    sheets = [Sheet.from_records("unified_perf_summary", rows, unified_cols, fm, notes)]

    by_cat: dict = {}
    for r in rows:
        if r["perf model"]:
            by_cat.setdefault(r["category"], []).append(r)
    for cat in sorted(by_cat):
        sub = by_cat[cat]
        pcols = [c for c in param_cols if any(r.get(c) is not None for r in sub)]
        cols = ["name"] + pcols + [c for c in base_cols if c not in ("name", "category", "perf model")] + \
            ["percent (%)"] + tail_cols
        sheets.append(Sheet.from_records(cat, sub, cols, fm, notes))
    return sheets


def _cell(v):
    if isinstance(v, (list, tuple)):
        return fmt_dims([v]) if all(isinstance(x, int) for x in v) else ", ".join(map(str, v))
    if isinstance(v, (np.generic,)):
        return v.item()
    return v
