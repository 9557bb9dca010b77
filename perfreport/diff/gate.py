"""``--fail-if-slower PCT``: the CI gate of ``perfreport diff``.

B regresses by more than PCT when ``time B > time A * (1 + PCT / 100)``: checked on the total
GPU kernel time and on each of the top N rows of ``diff_ops`` (by |delta|). A row that
appeared in B (no time in A) among the top N counts as a regression.
"""

from __future__ import annotations
from perfreport.tables import columns as C


def _regressed(ta: float, tb: float, pct: float) -> bool:
    return tb > ta * (1.0 + pct / 100.0)


def regressions(report, pct: float, top: int = 10) -> list[str]:
    """One line per regression beyond ``pct`` percent (empty: the gate passes)."""
    out = []
    s = report.sheet("diff_summary").records()[0]
    if _regressed(s[C.A], s[C.B], pct):
        out.append(
            f"total GPU kernel time {s['A']:.1f} -> {s['B']:.1f} µs "
            f"(+{100.0 * (s['B'] - s['A']) / s['A'] if s['A'] else float('inf'):.1f}%)"
        )
    for r in report.sheet("diff_ops").records()[: max(top, 0)]:
        ta, tb = r[C.TIME_A_US], r[C.TIME_B_US]
        if _regressed(ta, tb, pct):
            grow = f"+{100.0 * (tb - ta) / ta:.1f}%" if ta else "appeared"
            out.append(f"{r['name']} [{r['input dims']}] {ta:.1f} -> {tb:.1f} µs ({grow}, {r['match']})")
    return out


__all__ = ["regressions"]
