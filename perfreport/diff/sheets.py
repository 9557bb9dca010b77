"""Diff sheets: ``diff_summary``, ``diff_ops`` (matched op rows) and ``diff_gpu_timeline``.

Per matched row: delta = time B − time A (µs; negative = B is faster) and
speedup = time A / time B (> 1: B is faster; 0.5: B takes twice as long). Rows are sorted by
|delta|, the time gained or lost, largest first.
"""

from __future__ import annotations

from perfreport.diff.load import Side
from perfreport.diff.match import RULES, Match, match_rows
from perfreport.tables.sheet import INT, PCT, US, Sheet

OPS_COLS = [
    "match",
    "status",
    "name",
    "category",
    "input dims",
    "input types",
    "name B",
    "input dims B",
    "input types B",
    "count A",
    "count B",
    "time A (µs)",
    "time B (µs)",
    "delta (µs)",
    "speedup (A/B)",
    "share of total delta (%)",
    "roofline mean A (%)",
    "roofline mean B (%)",
    "kernels A",
    "kernels B",
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
            "match": m.rule,
            "status": _status(m, ta, tb),
            "name": a.first("name"),
            "category": a.first("category"),
            "input dims": a.first("input dims"),
            "input types": a.first("input types"),
            "count A": m.a.count if m.a else 0,
            "count B": m.b.count if m.b else 0,
            "time A (µs)": ta,
            "time B (µs)": tb,
            "delta (µs)": tb - ta,
            "speedup (A/B)": _speedup(ta, tb),
            "roofline mean A (%)": m.a.roofline if m.a else None,
            "roofline mean B (%)": m.b.roofline if m.b else None,
            "kernels A": m.a.kernels if m.a else "",
            "kernels B": m.b.kernels if m.b else "",
        }
        for col in ("name", "input dims", "input types"):  # B's value only where it differs
            vb = b.first(col)
            r[f"{col} B"] = vb if m.a and m.b and vb != r[col] else ""
        rows.append(r)
    rows.sort(key=lambda r: (-abs(r["delta (µs)"]), r["name"], r["input dims"], r["match"]))
    total = sum(r["delta (µs)"] for r in rows)
    for r in rows:
        r["share of total delta (%)"] = 100.0 * r["delta (µs)"] / total if total else 0.0
    return rows


def timeline_rows(a: Side, b: Side) -> list[dict]:
    """The two GPU timelines side by side; devices paired in sorted order (the device ids of
    two vendors' traces need not agree)."""

    def by_dev(rows):
        d: dict = {}
        for r in rows:
            d.setdefault(str(r.get("device")), {})[r.get("type")] = r
        return [d[k] for k in sorted(d, key=lambda s: (len(s), s))], sorted(d, key=lambda s: (len(s), s))

    da, ka = by_dev(a.timeline)
    db, kb = by_dev(b.timeline)
    rows = []
    for i in range(max(len(da), len(db))):
        ta = da[i] if i < len(da) else {}
        tb = db[i] if i < len(db) else {}
        types = list(ta) + [t for t in tb if t not in ta]
        for t in types:
            va = ta.get(t, {}).get("time (ms)")
            vb = tb.get(t, {}).get("time (ms)")
            rows.append(
                {
                    "device A": ka[i] if i < len(ka) else "",
                    "device B": kb[i] if i < len(kb) else "",
                    "type": t,
                    "time A (ms)": va,
                    "time B (ms)": vb,
                    "delta (ms)": (vb - va) if va is not None and vb is not None else None,
                    "speedup (A/B)": _speedup(va or 0.0, vb or 0.0),
                    "percent of total A (%)": ta.get(t, {}).get("percent of total (%)"),
                    "percent of total B (%)": tb.get(t, {}).get("percent of total (%)"),
                }
            )
    return rows


def summary_rows(a: Side, b: Side, ops: list[dict]) -> list[dict]:
    ta = sum(r["time A (µs)"] for r in ops)
    tb = sum(r["time B (µs)"] for r in ops)
    rows = [
        {
            "metric": "GPU kernel time (µs)",
            "A": ta,
            "B": tb,
            "delta": tb - ta,
            "speedup (A/B)": _speedup(ta, tb),
            "rows": len(ops),
        }
    ]
    for rule in RULES + ("vanished", "appeared"):
        sub = [r for r in ops if r["match"] == rule]
        sa = sum(r["time A (µs)"] for r in sub)
        sb = sum(r["time B (µs)"] for r in sub)
        rows.append(
            {
                "metric": f"rows matched by {rule} (µs)" if rule in RULES else f"{rule} rows (µs)",
                "A": sa,
                "B": sb,
                "delta": sb - sa,
                "speedup (A/B)": _speedup(sa, sb),
                "rows": len(sub),
            }
        )
    return rows


def build_diff_sheets(a: Side, b: Side) -> list[Sheet]:
    ops = ops_rows(match_rows(a.ops, b.ops))
    summ = summary_rows(a, b, ops)
    tl = timeline_rows(a, b)
    notes = [
        f"A: {a.source} ({a.kind})",
        f"B: {b.source} ({b.kind})",
        "delta = B − A; speedup = A / B (> 1: B is faster)",
    ]
    fm_ops = {c: US for c in OPS_COLS if "(µs)" in c} | {
        "count A": INT,
        "count B": INT,
        "speedup (A/B)": "0.000",
        "share of total delta (%)": PCT,
        "roofline mean A (%)": PCT,
        "roofline mean B (%)": PCT,
    }
    tl_cols = [
        "device A",
        "device B",
        "type",
        "time A (ms)",
        "time B (ms)",
        "delta (ms)",
        "speedup (A/B)",
        "percent of total A (%)",
        "percent of total B (%)",
    ]
    return [
        Sheet.from_records(
            "diff_summary",
            summ,
            ["metric", "A", "B", "delta", "speedup (A/B)", "rows"],
            {"A": US, "B": US, "delta": US, "speedup (A/B)": "0.000", "rows": INT},
            notes,
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
            | {"percent of total A (%)": PCT, "percent of total B (%)": PCT},
            [] if tl else ["a side has no gpu_timeline"],
        ),
    ]


__all__ = ["build_diff_sheets", "ops_rows", "timeline_rows", "OPS_COLS"]
