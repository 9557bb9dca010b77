"""``perfreport diff`` on a terminal: the rows gained or lost, laid out for the console width.

Same conventions as the analyze summary (:mod:`perfreport.writers.console`): compact numbers
that never wrap, the op name as the one flexible column shortened in the middle, the shape
column only when there is room.
"""

from __future__ import annotations

import io

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from perfreport.writers import numfmt
from perfreport.writers.console import MIN_NAME, compact_shape, console_text, sheet_table, shorten_end, shorten_middle
from perfreport.tables import columns as C

_STATUS = {"name+shapes+dtypes": "same shape", "name+category": "same name", "kernel name": "same kernels"}


def _delta(v) -> str:
    s = numfmt.time_us(v)
    return s if not s or s.startswith("-") or v == 0 else "+" + s


def _speedup(v) -> str:
    return f"{v:.2f}x" if isinstance(v, (int, float)) and v == v and v not in (float("inf"),) else ""


def _roofline(r) -> str:
    a, b = numfmt.pct(r.get(C.ROOFLINE_MEAN_A_PCT)), numfmt.pct(r.get(C.ROOFLINE_MEAN_B_PCT))
    return f"{a or '-'}→{b or '-'}" if a or b else ""


def diff_timeline_table(report) -> Table:
    """``diff_gpu_timeline``: per device pair and time type, A and B side by side."""
    t = Table(
        box=box.SIMPLE_HEAD,
        show_edge=False,
        pad_edge=False,
        header_style="bold",
        title="GPU timeline, A vs B (diff_gpu_timeline)",
        title_justify="left",
    )
    for head in ("GPU A/B", "type", "time A", "time B", "delta", "A/B", "share A", "share B"):
        t.add_column(head, justify="left" if head in ("GPU A/B", "type") else "right", no_wrap=True)
    for r in report.sheet("diff_gpu_timeline").records():
        ms = lambda k: numfmt.time_us(r[k] * 1e3) if r.get(k) is not None else ""  # noqa: E731
        t.add_row(
            *[
                Text(x)
                for x in (
                    f"{r['device A']}/{r['device B']}",
                    str(r[C.TYPE]),
                    ms(C.TIME_A_MS),
                    ms(C.TIME_B_MS),
                    _delta(r[C.DELTA_MS] * 1e3) if r.get(C.DELTA_MS) is not None else "",
                    _speedup(r.get(C.SPEEDUP_A_PER_B)),
                    numfmt.pct(r.get(C.PERCENT_OF_TOTAL_A_PCT)),
                    numfmt.pct(r.get(C.PERCENT_OF_TOTAL_B_PCT)),
                )
            ]
        )
    return t


def diff_ops_table(report, width: int, top: int = 10) -> Table:
    """The first ``top`` rows of ``diff_ops`` (sorted by |delta|) in ``width`` columns."""
    data = report.sheet("diff_ops").records()[:top]
    cols = [
        ("match", "match", lambda r: _STATUS.get(r[C.MATCH], r[C.MATCH]), 0),
        ("shape", "shape", lambda r: shorten_end(compact_shape(r.get(C.INPUT_DIMS) or ""), 22), 110),
        ("time A", "time A", lambda r: numfmt.time_us(r.get(C.TIME_A_US)), 0),
        ("time B", "time B", lambda r: numfmt.time_us(r.get(C.TIME_B_US)), 0),
        ("delta", "delta", lambda r: _delta(r.get(C.DELTA_US)), 0),
        ("speedup", "A/B", lambda r: _speedup(r.get(C.SPEEDUP_A_PER_B)), 0),
        ("roofline", "roofline A→B", _roofline, 96),
    ]
    shown = [c for c in cols if width >= c[3]]
    longest = max([len(str(r[C.NAME])) for r in data] + [4])
    measure = Console(width=10_000, file=io.StringIO())
    name_w = min(longest, 60)
    while True:
        t = _build(data, shown, name_w)
        need = measure.measure(t).maximum
        if need <= width:
            return t
        optional = [c for c in shown if c[3] > 0]
        if name_w - (need - width) >= (28 if optional else MIN_NAME):
            name_w -= need - width
            continue
        if not optional:
            return _build(data, shown, MIN_NAME)
        shown.remove(optional[0])  # shape first, then the roofline columns
        name_w = min(longest, 60)


def _build(data, shown, name_w: int) -> Table:
    cells = [{k: f(r) for k, _, f, _ in shown} for r in data]
    t = Table(
        box=box.SIMPLE_HEAD,
        show_edge=False,
        pad_edge=False,
        header_style="bold",
        title="rows by time gained or lost (diff_ops)",
        title_justify="left",
    )
    t.add_column("name", no_wrap=True, overflow="ellipsis", min_width=name_w, max_width=name_w)
    for k, head, _, _ in shown:
        w = max([len(head)] + [len(c[k]) for c in cells])
        t.add_column(
            head,
            justify="left" if k in ("match", "shape") else "right",
            no_wrap=True,
            overflow="ellipsis",
            min_width=w,
            max_width=w,
        )
    for r, c in zip(data, cells):
        t.add_row(Text(shorten_middle(str(r[C.NAME]), name_w)), *[Text(c[k]) for k, *_ in shown])
    return t


def print_diff_summary(report, console: Console, top: int = 10) -> None:
    """``perfreport diff`` on a terminal: the totals, the top rows gained or lost, timelines."""
    console.print(f"[bold]{console_text(report.source)}[/bold]", highlight=False)
    if "diff_context" in report.sheet_names:
        for n in report.sheet("diff_context").notes:
            if n.startswith("A and B differ") or n.startswith("the times and speedups"):
                console.print(f"[bold yellow]{console_text(n)}[/bold yellow]", highlight=False)
    console.print(sheet_table(report.sheet("diff_summary")))
    console.print(diff_ops_table(report, console.width, top))
    if report.sheet("diff_gpu_timeline").rows:
        console.print(diff_timeline_table(report))
    for n in report.sheet("diff_summary").notes:
        console.print(f"[dim]{console_text(n)}[/dim]", highlight=False)


__all__ = ["diff_ops_table", "diff_timeline_table", "print_diff_summary"]
