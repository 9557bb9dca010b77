"""A merged multi-rank report on a terminal (``perfreport analyze`` with several traces).

Same layout rules as the single-trace summary (:mod:`perfreport.writers.console`): every table
fits the console through :func:`perfreport.writers.fit_table.fit`; numbers are compact and
whole, names and shapes shortened in the middle, optional columns dropped by priority.
"""

from __future__ import annotations

from perfreport.tables import columns as C

from rich.console import Console

from perfreport.writers import numfmt
from perfreport.writers.console import MIN_NAME, compact_shape, print_line, print_notes
from perfreport.writers.fit_table import Col, fit

_MS = lambda v: numfmt.time_us(v * 1e3) if isinstance(v, (int, float)) else ""  # noqa: E731
_B = lambda v: numfmt.number(v) if isinstance(v, (int, float)) else ""  # noqa: E731

# (sheet column, header, formatter, drop, flex)
RANKS = [
    ("rank", "rank", str, 0, False),
    (C.RANK_FROM, "from", None, 4, False),
    ("trace", "trace", None, 6, True),
    (C.KERNEL_TIME_US, "kernels", numfmt.time_us, 0, False),
    (C.MODELLED_PCT, "modelled", numfmt.pct, 0, False),
    (C.BUSY_MS, "busy", _MS, 0, False),
    (C.EXPOSED_COMM_MS, "exp. comm", _MS, 0, False),
    (C.IDLE_MS, "idle", _MS, 0, False),
    (C.COLLECTIVE_CALLS, "coll.", numfmt.count, 5, False),
]
OPS = [
    ("name", "name", None, 0, True),
    (C.INPUT_DIMS, "shape", compact_shape, 3, True),
    (C.TIME_MIN_US, "min", numfmt.time_us, 0, False),
    (C.TIME_MEDIAN_US, "median", numfmt.time_us, 0, False),
    (C.TIME_MAX_US, "max", numfmt.time_us, 0, False),
    (C.SLOWEST_RANK, "slowest", str, 0, False),
    (C.MAX_PER_MEDIAN, "max/med", lambda v: f"{v:.2f}" if isinstance(v, (int, float)) else "", 0, False),
]
COLLECTIVES = [
    (C.PROCESS_GROUP, "group", None, 0, True),
    ("seq", "seq", str, 0, False),
    ("collective", "collective", None, 0, True),
    (C.MESSAGE_SIZE_B, "size B", _B, 0, False),
    (C.START_SKEW_US, "skew", numfmt.time_us, 0, False),
    (C.STRAGGLER_RANK, "straggler", str, 2, False),
    (C.TRANSFER_TIME_US, "transfer", numfmt.time_us, 0, False),
    (C.ALGBW_GB_PER_S, "algbw GB/s", numfmt.number, 3, False),
    (C.BUSBW_GB_PER_S, "busbw GB/s", numfmt.number, 0, False),
    (C.BUSBW_OF_LINK_PCT, "of link", numfmt.pct, 1, False),
]


def _view(sheet, spec, width: int, top: int | None, title: str):
    recs = sheet.records()[: top if top is not None else None]
    cols = []
    for key, head, _, drop, flex in spec:
        if key in sheet.columns:
            mn = MIN_NAME if key == "name" else 12 if key in ("trace", C.INPUT_DIMS) else len(head)
            cut = "items" if key == C.INPUT_DIMS else "middle"
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
    prov = getattr(report, "provenance", {}) or {}  # version, command, checksums: in the files, not here
    notes = [n for n in report.notes if n.split(": ", 1)[0] not in prov]
    print_notes(console, [str(x) for x in report.coverage.lines()] if report.coverage else [], notes, width)


__all__ = ["print_summary_multi"]
