"""Diff sheets: ``diff_summary``, ``diff_ops`` (matched op rows) and ``diff_gpu_timeline``.

Per matched row: delta = time B − time A (µs; negative = B is faster) and
speedup = time A / time B (> 1: B is faster; 0.5: B takes twice as long). Rows are sorted by
|delta|, the time gained or lost, largest first.
"""

from __future__ import annotations

from perfreport.diff.context import compare
from perfreport.diff.load import Side
from perfreport.diff.match import RULES, Match, match_rows
from perfreport.tables.columns import INT, PCT, US
from perfreport.tables.sheet import Sheet
from perfreport.tables import columns as C

OPS_COLS = [
    C.MATCH,
    C.STATUS,
    C.NAME,
    C.CATEGORY,
    C.INPUT_DIMS,
    C.INPUT_TYPES,
    C.NAME_B,
    C.INPUT_DIMS_B,
    C.INPUT_TYPES_B,
    C.COUNT_A,
    C.COUNT_B,
    C.TIME_A_US,
    C.TIME_B_US,
    C.DELTA_US,
    C.SPEEDUP_A_PER_B,
    C.SHARE_OF_TOTAL_DELTA_PCT,
    C.ROOFLINE_MEAN_A_PCT,
    C.ROOFLINE_MEAN_B_PCT,
    C.KERNELS_A,
    C.KERNELS_B,
]


def _speedup(ta: float, tb: float):
    return ta / tb if ta > 0 and tb > 0 else None


def _status(m: Match, ta: float, tb: float) -> str:
    if m.a is None:
        return "appeared"
    if m.b is None:
        return "vanished"
    if abs(tb - ta) <= 1e-9 * max(ta, tb):  # equal to the precision a workbook keeps
        return "same"
    return "faster" if tb < ta else "slower"


def ops_rows(matches: list[Match]) -> list[dict]:
    rows = []
    for m in matches:
        ta = m.a.time if m.a else 0.0
        tb = m.b.time if m.b else 0.0
        a, b = m.a or m.b, m.b or m.a
        r = {
            C.MATCH: m.rule,
            C.STATUS: _status(m, ta, tb),
            C.NAME: a.first(C.NAME),
            C.CATEGORY: a.first(C.CATEGORY),
            C.INPUT_DIMS: a.first(C.INPUT_DIMS),
            C.INPUT_TYPES: a.first(C.INPUT_TYPES),
            C.COUNT_A: m.a.count if m.a else 0,
            C.COUNT_B: m.b.count if m.b else 0,
            C.TIME_A_US: ta,
            C.TIME_B_US: tb,
            C.DELTA_US: tb - ta,
            C.SPEEDUP_A_PER_B: _speedup(ta, tb),
            C.ROOFLINE_MEAN_A_PCT: m.a.roofline if m.a else None,
            C.ROOFLINE_MEAN_B_PCT: m.b.roofline if m.b else None,
            C.KERNELS_A: m.a.kernels if m.a else "",
            C.KERNELS_B: m.b.kernels if m.b else "",
        }
        for col in (C.NAME, C.INPUT_DIMS, C.INPUT_TYPES):  # B's value only where it differs
            vb = b.first(col)
            r[C.side_b(col)] = vb if m.a and m.b and vb != r[col] else ""
        rows.append(r)
    # |delta| first; ties (a self-diff: every delta 0) by time, largest first, not by name
    rows.sort(
        key=lambda r: (
            -abs(r[C.DELTA_US]),
            -max(r[C.TIME_A_US], r[C.TIME_B_US]),
            r[C.NAME],
            r[C.INPUT_DIMS],
            r[C.MATCH],
        )
    )
    total = sum(r[C.DELTA_US] for r in rows)
    for r in rows:
        r[C.SHARE_OF_TOTAL_DELTA_PCT] = 100.0 * r[C.DELTA_US] / total if total else 0.0
    return rows


def timeline_rows(a: Side, b: Side) -> list[dict]:
    """The two GPU timelines side by side; devices paired in sorted order (the device ids of
    two vendors' traces need not agree)."""

    def by_dev(rows):
        d: dict = {}
        for r in rows:
            d.setdefault(str(r.get(C.DEVICE)), {})[r.get(C.TYPE)] = r
        return [d[k] for k in sorted(d, key=lambda s: (len(s), s))], sorted(d, key=lambda s: (len(s), s))

    da, ka = by_dev(a.timeline)
    db, kb = by_dev(b.timeline)
    rows = []
    for i in range(max(len(da), len(db))):
        ta = da[i] if i < len(da) else {}
        tb = db[i] if i < len(db) else {}
        types = list(ta) + [t for t in tb if t not in ta]
        for t in types:
            va = ta.get(t, {}).get(C.TIME_MS)
            vb = tb.get(t, {}).get(C.TIME_MS)
            rows.append(
                {
                    C.DEVICE_A: ka[i] if i < len(ka) else "",
                    C.DEVICE_B: kb[i] if i < len(kb) else "",
                    C.TYPE: t,
                    C.TIME_A_MS: va,
                    C.TIME_B_MS: vb,
                    C.DELTA_MS: (vb - va) if va is not None and vb is not None else None,
                    C.SPEEDUP_A_PER_B: _speedup(va or 0.0, vb or 0.0),
                    C.PERCENT_OF_TOTAL_A_PCT: ta.get(t, {}).get(C.PERCENT_OF_TOTAL_PCT),
                    C.PERCENT_OF_TOTAL_B_PCT: tb.get(t, {}).get(C.PERCENT_OF_TOTAL_PCT),
                }
            )
    return rows


def summary_rows(a: Side, b: Side, ops: list[dict]) -> list[dict]:
    ta = sum(r[C.TIME_A_US] for r in ops)
    tb = sum(r[C.TIME_B_US] for r in ops)
    rows = [
        {
            C.METRIC: "GPU kernel time (µs)",
            C.A: ta,
            C.B: tb,
            C.DELTA: tb - ta,
            C.SPEEDUP_A_PER_B: _speedup(ta, tb),
            C.ROWS: len(ops),
        }
    ]
    for rule in RULES + ("vanished", "appeared"):
        sub = [r for r in ops if r[C.MATCH] == rule]
        sa = sum(r[C.TIME_A_US] for r in sub)
        sb = sum(r[C.TIME_B_US] for r in sub)
        rows.append(
            {
                C.METRIC: f"rows matched by {rule} (µs)" if rule in RULES else f"{rule} rows (µs)",
                C.A: sa,
                C.B: sb,
                C.DELTA: sb - sa,
                C.SPEEDUP_A_PER_B: _speedup(sa, sb),
                C.ROWS: len(sub),
            }
        )
    return rows


def build_diff_sheets(a: Side, b: Side) -> list[Sheet]:
    ops = ops_rows(match_rows(a.ops, b.ops))
    summ = summary_rows(a, b, ops)
    tl = timeline_rows(a, b)
    ctx_rows, mismatch = compare(a.context, b.context)
    notes = [
        f"A: {a.source} ({a.kind})",
        f"B: {b.source} ({b.kind})",
        "delta = B − A; speedup = A / B (> 1: B is faster)",
    ]
    fm_ops = {c: US for c in OPS_COLS if "(µs)" in c} | {
        C.COUNT_A: INT,
        C.COUNT_B: INT,
        C.SPEEDUP_A_PER_B: "0.000",
        C.SHARE_OF_TOTAL_DELTA_PCT: PCT,
        C.ROOFLINE_MEAN_A_PCT: PCT,
        C.ROOFLINE_MEAN_B_PCT: PCT,
    }
    tl_cols = [
        C.DEVICE_A,
        C.DEVICE_B,
        C.TYPE,
        C.TIME_A_MS,
        C.TIME_B_MS,
        C.DELTA_MS,
        C.SPEEDUP_A_PER_B,
        C.PERCENT_OF_TOTAL_A_PCT,
        C.PERCENT_OF_TOTAL_B_PCT,
    ]
    return [
        Sheet.from_records(
            "diff_summary",
            summ,
            [C.METRIC, C.A, C.B, C.DELTA, C.SPEEDUP_A_PER_B, C.ROWS],
            {C.A: US, C.B: US, C.DELTA: US, C.SPEEDUP_A_PER_B: "0.000", C.ROWS: INT},
            notes,
        ),
        Sheet.from_records(
            "diff_context",
            ctx_rows,
            [C.FIELD, C.A, C.B, C.COMPARISON],
            {},
            mismatch or ["A and B agree on every field both record (GPU, GPU spec, world size, rank)"],
        ),
        Sheet.from_records(
            "diff_ops",
            ops,
            OPS_COLS,
            fm_ops,
            ["match rules in order: " + ", ".join(RULES) + "; rows sorted by |delta|"],
        ),
        Sheet.from_records(
            "diff_gpu_timeline",
            tl,
            tl_cols,
            {c: "0.000" for c in tl_cols if "(ms)" in c}
            | {C.PERCENT_OF_TOTAL_A_PCT: PCT, C.PERCENT_OF_TOTAL_B_PCT: PCT},
            [] if tl else ["a side has no gpu_timeline"],
        ),
    ]


__all__ = ["build_diff_sheets", "ops_rows", "timeline_rows", "OPS_COLS"]
