"""A merged multi-rank report on a terminal (``perfreport analyze`` with several traces).

Same layout rules as the single-trace summary (:mod:`perfreport.writers.console`): every table
fits the console through :func:`perfreport.writers.fit_table.fit`; numbers are compact and
whole, names and shapes shortened in the middle, optional columns dropped by priority.
"""

from __future__ import annotations

from rich.console import Console

from perfreport.writers import numfmt
from perfreport.writers.console import MIN_NAME, compact_shape, print_line, print_notes
from perfreport.writers.fit_table import Col, fit

_MS = lambda v: numfmt.time_us(v * 1e3) if isinstance(v, (int, float)) else ""  # noqa: E731
_B = lambda v: numfmt.number(v) if isinstance(v, (int, float)) else ""  # noqa: E731

# (sheet column, header, formatter, drop, flex)
RANKS = [
    ("rank", "rank", str, 0, False),
    ("rank from", "from", None, 4, False),
    ("trace", "trace", None, 6, True),
    ("kernel time (µs)", "kernels", numfmt.time_us, 0, False),
    ("modelled (%)", "modelled", numfmt.pct, 0, False),
    ("busy (ms)", "busy", _MS, 0, False),
    ("exposed comm (ms)", "exp. comm", _MS, 0, False),
    ("idle (ms)", "idle", _MS, 0, False),
    ("collective calls", "coll.", numfmt.count, 5, False),
]
OPS = [
    ("name", "name", None, 0, True),
    ("input dims", "shape", compact_shape, 3, True),
    ("time min (µs)", "min", numfmt.time_us, 0, False),
    ("time median (µs)", "median", numfmt.time_us, 0, False),
    ("time max (µs)", "max", numfmt.time_us, 0, False),
    ("slowest rank", "slowest", str, 0, False),
    ("max / median", "max/med", lambda v: f"{v:.2f}" if isinstance(v, (int, float)) else "", 0, False),
]
COLLECTIVES = [
    ("process group", "group", None, 0, True),
    ("seq", "seq", str, 0, False),
    ("collective", "collective", None, 0, True),
    ("message size (B)", "size B", _B, 0, False),
    ("start skew (µs)", "skew", numfmt.time_us, 0, False),
    ("straggler rank", "straggler", str, 2, False),
    ("transfer time (µs)", "transfer", numfmt.time_us, 0, False),
    ("algbw (GB/s)", "algbw GB/s", numfmt.number, 3, False),
    ("busbw (GB/s)", "busbw GB/s", numfmt.number, 0, False),
    ("busbw of link (%)", "of link", numfmt.pct, 1, False),
]


def _view(sheet, spec, width: int, top: int | None, title: str):
    recs = sheet.records()[: top if top is not None else None]
    cols = []
    for key, head, _, drop, flex in spec:
        if key in sheet.columns:
            mn = MIN_NAME if key == "name" else 12 if key in ("trace", "input dims") else len(head)
            cut = "items" if key == "input dims" else "middle"
            cols.append(Col(head, key=key, num=not flex and head != "from", drop=drop, flex=flex, min=mn, cut=cut))
    fmt = {key: f for key, _, f, _, _ in spec}
    cells = [
        {c.k: ("" if r.get(c.k) is None else (fmt[c.k](r[c.k]) if fmt[c.k] else r[c.k])) for c in cols} for r in recs
    ]
    return fit(cells, cols, width, title=title)


def print_summary_multi(report, console: Console, top: int = 15) -> None:
    """Ranks, the top ops by rank, collectives, the coverage statement (all ranks, then each),
    the notes."""
    width = console.width
    print_line(console, f"{report.source} — {report.arch_msg}", width, style="bold")
    console.print(_view(report.sheet("ranks"), RANKS, width, None, "ranks"))
    console.print()
    console.print(_view(report.sheet("ops_by_rank"), OPS, width, top, "top ops by time, across ranks (ops_by_rank)"))
    if "collectives" in report.sheet_names:
        console.print()
        console.print(_view(report.sheet("collectives"), COLLECTIVES, width, top, "collectives"))
    console.print()
    print_notes(console, [str(x) for x in report.coverage.lines()] if report.coverage else [], report.notes, width)


__all__ = ["print_summary_multi"]
