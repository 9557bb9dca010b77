"""The self-audit view: every flagged row of ``unified_perf_summary``, by GPU time affected.

One row per (flag, perf row), sorted by the perf row's time, so what would change the picture
most comes first; :func:`audit_totals` sums the time per flag tag. Rows with several flags
appear once per flag (the totals per tag may therefore add to more than the GPU time).
"""

from __future__ import annotations

from perfreport.tables.flags import split_flags, tag_of
from perfreport.tables.columns import PCT, US
from perfreport.tables.sheet import Sheet
from perfreport.tables import columns as C

COLUMNS = [
    C.FLAG,
    C.TIME_AFFECTED_US,
    C.PERCENT_OF_TOTAL_PCT,
    C.NAME,
    C.INPUT_DIMS,
    C.COUNT,
    C.ROOFLINE_MAX_PCT,
    C.DETAIL,
]


def audit_sheet(unified: Sheet) -> Sheet:
    """The ``audit`` sheet of a ``unified_perf_summary`` sheet."""
    recs = unified.records()
    total = sum(r.get(C.TIME_SUM_US) or 0.0 for r in recs)
    rows = []
    for r in recs:
        t = r.get(C.TIME_SUM_US) or 0.0
        for f in split_flags(r.get(C.FLAGS)):
            rows.append(
                {
                    C.FLAG: tag_of(f),
                    C.TIME_AFFECTED_US: t,
                    C.PERCENT_OF_TOTAL_PCT: 100.0 * t / total if total else 0.0,
                    C.NAME: r.get(C.NAME),
                    C.INPUT_DIMS: r.get(C.INPUT_DIMS),
                    C.COUNT: r.get(C.COUNT),
                    C.ROOFLINE_MAX_PCT: r.get(C.ROOFLINE_MAX_PCT),
                    C.DETAIL: f.split(":", 1)[1].strip() if ":" in f else f,
                }
            )
    rows.sort(key=lambda x: -x[C.TIME_AFFECTED_US])
    notes = [
        f"{tag}: {n} row(s), {t:,.1f} µs ({100.0 * t / total if total else 0.0:.1f}% of the time)"
        for tag, (n, t) in audit_totals(rows).items()
    ]
    return Sheet.from_records(
        "audit",
        rows,
        COLUMNS,
        {C.TIME_AFFECTED_US: US, C.PERCENT_OF_TOTAL_PCT: PCT, C.ROOFLINE_MAX_PCT: PCT, C.COUNT: "0"},
        notes,
    )


def audit_totals(rows: list[dict]) -> dict[str, tuple[int, float]]:
    """tag -> (rows, time affected in µs), largest time first."""
    acc: dict[str, list] = {}
    for r in rows:
        a = acc.setdefault(r[C.FLAG], [0, 0.0])
        a[0] += 1
        a[1] += r[C.TIME_AFFECTED_US]
    return {k: (n, t) for k, (n, t) in sorted(acc.items(), key=lambda kv: -kv[1][1])}


__all__ = ["audit_sheet", "audit_totals", "COLUMNS"]
