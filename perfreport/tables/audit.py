"""The self-audit view: every flagged row of ``unified_perf_summary``, by GPU time affected.

One row per (flag, perf row), sorted by the perf row's time, so what would change the picture
most comes first; :func:`audit_totals` sums the time per flag tag. Rows with several flags
appear once per flag (the totals per tag may therefore add to more than the GPU time).
"""

from __future__ import annotations

from perfreport.tables.flags import split_flags, tag_of
from perfreport.tables.sheet import PCT, US, Sheet

COLUMNS = [
    "flag",
    "time affected (µs)",
    "percent of total (%)",
    "name",
    "input dims",
    "count",
    "roofline max (%)",
    "detail",
]


def audit_sheet(unified: Sheet) -> Sheet:
    """The ``audit`` sheet of a ``unified_perf_summary`` sheet."""
    recs = unified.records()
    total = sum(r.get("time sum (µs)") or 0.0 for r in recs)
    rows = []
    for r in recs:
        t = r.get("time sum (µs)") or 0.0
        for f in split_flags(r.get("flags")):
            rows.append(
                {
                    "flag": tag_of(f),
                    "time affected (µs)": t,
                    "percent of total (%)": 100.0 * t / total if total else 0.0,
                    "name": r.get("name"),
                    "input dims": r.get("input dims"),
                    "count": r.get("count"),
                    "roofline max (%)": r.get("roofline max (%)"),
                    "detail": f.split(":", 1)[1].strip() if ":" in f else f,
                }
            )
    rows.sort(key=lambda x: -x["time affected (µs)"])
    notes = [
        f"{tag}: {n} row(s), {t:,.1f} µs ({100.0 * t / total if total else 0.0:.1f}% of the time)"
        for tag, (n, t) in audit_totals(rows).items()
    ]
    return Sheet.from_records(
        "audit",
        rows,
        COLUMNS,
        {"time affected (µs)": US, "percent of total (%)": PCT, "roofline max (%)": PCT, "count": "0"},
        notes,
    )


def audit_totals(rows: list[dict]) -> dict[str, tuple[int, float]]:
    """tag -> (rows, time affected in µs), largest time first."""
    acc: dict[str, list] = {}
    for r in rows:
        a = acc.setdefault(r["flag"], [0, 0.0])
        a[0] += 1
        a[1] += r["time affected (µs)"]
    return {k: (n, t) for k, (n, t) in sorted(acc.items(), key=lambda kv: -kv[1][1])}


__all__ = ["audit_sheet", "audit_totals", "COLUMNS"]
