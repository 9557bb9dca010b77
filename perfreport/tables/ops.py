"""Op sheets: ``ops_summary``, ``ops_summary_by_category``, ``ops_unique_args``.

Times are GPU kernel times in µs attributed through the tree: an op's *direct* time is the
time of the kernels its own runtime calls launched; its *subtree* time adds its children's.
Percentages are of all GPU event time in the trace (kernels, memcpy, memset), so the
``(unlinked GPU events)`` row closes the sum to 100%.
"""
from __future__ import annotations

from collections import defaultdict

import numpy as np
import pandas as pd

from perfreport.events import CPU_OP, DRIVER, RUNTIME
from perfreport.models.registry import category_of
from perfreport.tables.op_times import OpTimes
from perfreport.tables.sheet import INT, PCT, US, Sheet, fmt_dims, fmt_list

UNLINKED = "(unlinked GPU events)"


def _op_rows(tree, times: OpTimes):
    """(name, category, direct, subtree, cpu_dur, op) for each op that matters."""
    has_gpu = bool(tree.gpu)
    for o in tree.ops:
        if o.cat == CPU_OP:
            if not has_gpu or times.subtree[o.uid] > 0 or o.kernels:
                yield o
        elif o.kernels and (o.cat not in (RUNTIME, DRIVER) or o.parent is None):
            yield o


def category(o) -> str:
    if o.cat in (RUNTIME, DRIVER):
        return "runtime (no op)"
    if o.cat != CPU_OP:
        return o.cat
    return category_of(o.name)


def _add_pct(df: pd.DataFrame, col: str, total: float) -> pd.DataFrame:
    df = df.sort_values(col, ascending=False, kind="stable").reset_index(drop=True)
    pct = df[col] / total * 100.0 if total else df[col] * 0.0
    df["percent (%)"] = pct
    df["cumulative percent (%)"] = pct.cumsum()
    return df


def ops_summary(tree, times: OpTimes) -> Sheet:
    agg: dict = defaultdict(lambda: [0, 0.0, 0.0, 0.0, ""])
    for o in _op_rows(tree, times):
        a = agg[o.name]
        a[0] += 1
        a[1] += times.direct[o.uid]
        a[2] += times.subtree[o.uid]
        a[3] += o.dur
        a[4] = a[4] or category(o)
    rows = [{"name": k, "category": v[4], "count": v[0], "direct kernel time (µs)": v[1],
             "subtree kernel time (µs)": v[2], "CPU time (µs)": v[3]} for k, v in agg.items()]
    un = [g for g in tree.gpu if g.launcher is None]
    if un:
        rows.append({"name": UNLINKED, "category": "unlinked", "count": len(un),
                     "direct kernel time (µs)": sum(g.dur for g in un),
                     "subtree kernel time (µs)": sum(g.dur for g in un), "CPU time (µs)": 0.0})
    cols = ["name", "category", "count", "direct kernel time (µs)", "subtree kernel time (µs)",
            "CPU time (µs)"]
    df = pd.DataFrame(rows, columns=cols)
    key = "direct kernel time (µs)" if tree.gpu else "CPU time (µs)"
    total = sum(g.dur for g in tree.gpu) if tree.gpu else df[key].sum()
    df = _add_pct(df, key, total)
    notes = [] if tree.gpu else ["no GPU events: percentages are of CPU op time"]
    return Sheet("ops_summary", df, {c: US for c in cols[3:]} | {"count": INT,
                 "percent (%)": PCT, "cumulative percent (%)": PCT}, notes)


def ops_summary_by_category(summary: Sheet, tree) -> Sheet:
    df = summary.df
    key = "direct kernel time (µs)" if tree.gpu else "CPU time (µs)"
    g = df.groupby("category", sort=False).agg(count=("count", "sum"), t=(key, "sum")).reset_index()
    g = g.rename(columns={"t": key})
    total = sum(x.dur for x in tree.gpu) if tree.gpu else g[key].sum()
    g = _add_pct(g, key, total)
    return Sheet("ops_summary_by_category", g, {key: US, "count": INT, "percent (%)": PCT,
                                                "cumulative percent (%)": PCT})


def kernel_text(kernels) -> str:
    """Readable list of the kernels of one instance: ``name (12.345 µs); name2 (...)``."""
    return "; ".join(f"{k.name} ({k.dur:.3f} µs)" for k in kernels)


class KernelAcc:
    """Kernels across the instances of a group, as ``name [stream s] x count, mean µs``."""

    __slots__ = ("acc",)

    def __init__(self):
        self.acc: dict = {}

    def add(self, kernels) -> None:
        acc = self.acc
        for k in kernels:
            key = (k.name, k.stream)
            a = acc.get(key)
            if a is None:
                acc[key] = [1, k.dur]
            else:
                a[0] += 1
                a[1] += k.dur

    def text(self) -> str:
        return "; ".join(f"{n} [stream {s}] x{c}, mean {t / c:.3f} µs" for (n, s), (c, t) in self.acc.items())


def kernels_summary_text(kernel_lists) -> str:
    acc = KernelAcc()
    for ks in kernel_lists:
        acc.add(ks)
    return acc.text()


def ops_unique_args(tree, times: OpTimes) -> Sheet:
    groups: dict = defaultdict(list)
    for o in _op_rows(tree, times):
        a = o.args
        key = (o.name, id(a) if a else 0)   # args dicts are interned by the reader
        groups[key].append(o)
    rows = []
    for (name, _), ops in groups.items():
        o0 = ops[0]
        a = o0.args
        d = np.array([times.direct[o.uid] for o in ops])
        s = np.array([times.subtree[o.uid] for o in ops])
        cpu = np.array([o.dur for o in ops])
        rows.append({
            "name": name, "category": category(o0),
            "input dims": fmt_dims(a.get("Input Dims")), "input types": fmt_list(a.get("Input type")),
            "input strides": fmt_dims(a.get("Input Strides")),
            "concrete inputs": fmt_list(a.get("Concrete Inputs")),
            "count": len(ops),
            "direct kernel time mean (µs)": d.mean(), "direct kernel time median (µs)": float(np.median(d)),
            "direct kernel time std (µs)": d.std(ddof=1) if len(d) > 1 else 0.0,
            "direct kernel time min (µs)": d.min(), "direct kernel time max (µs)": d.max(),
            "direct kernel time sum (µs)": d.sum(), "subtree kernel time sum (µs)": s.sum(),
            "CPU time mean (µs)": cpu.mean(), "CPU time sum (µs)": cpu.sum(),
            "kernels": kernels_summary_text(o.kernels or [] for o in ops),
            "example op uid": o0.uid,
        })
    df = pd.DataFrame(rows)
    if df.empty:
        df = pd.DataFrame(columns=["name", "category", "count", "direct kernel time sum (µs)"])
    key = "direct kernel time sum (µs)" if tree.gpu else "CPU time sum (µs)"
    if key not in df:
        df[key] = []
    total = sum(g.dur for g in tree.gpu) if tree.gpu else float(df[key].sum())
    df = _add_pct(df, key, total)
    fm = {c: US for c in df.columns if "(µs)" in c}
    fm.update({"count": INT, "percent (%)": PCT, "cumulative percent (%)": PCT})
    return Sheet("ops_unique_args", df, fm)
