"""The first screen of the console summary: what to fix first (the ``fix_first`` sheet's top rows).

One line per win, never wider than the console: rank, time won (µs, ``min-max`` where the row
has bounds), share of the run, what; a caveat marker ``*`` sends the reader to the legend line.
"""

from __future__ import annotations

from rich.text import Text

from perfreport.tables import columns as C
from perfreport.writers.cells import text


def _cut(s: str, width: int) -> str:
    return s if len(s) <= width else s[: max(1, width - 1)] + "…"


def fix_first_lines(report, width: int, n: int = 5) -> list[Text]:
    try:
        sheet = report.sheet("fix_first")
    except KeyError:
        return []
    recs = sheet.records()[:n]
    if not recs:
        return []
    out = [Text(text("what to fix first (GPU time that could be won, share of the run):"), style="bold")]
    marked = False
    for r in recs:
        lo, hi, won = r[C.WON_MIN_US], r[C.WON_MAX_US], r[C.WON_US]
        fig = f"{won:,.0f} µs" if hi - lo < 0.5 or r[C.KIND] != "roofline gap" else f"{lo:,.0f}-{hi:,.0f} µs"
        if r[C.KIND] != "roofline gap":
            fig = f"<= {hi:,.0f} µs"
        mark = "*" if r[C.CAVEAT] and r[C.KIND] == "roofline gap" else " "
        marked |= mark == "*"
        head = f"{r[C.PRIORITY]:>3}. {fig:>16} {r[C.SHARE_OF_RUN_PCT]:5.1f}%{mark} "
        out.append(Text(text(head + _cut(str(r[C.WHAT]), max(10, width - len(head) - 1)))))
    if marked:
        out.append(
            Text(text("  * bounds or suspect inputs: sorted by the lower bound (fix_first: caveat)"), style="dim")
        )
    return out


__all__ = ["fix_first_lines"]
