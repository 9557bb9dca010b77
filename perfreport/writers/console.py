"""Rich console output: the terminal summary and single-sheet tables."""
from __future__ import annotations

from rich.console import Console
from rich.table import Table

from perfreport.writers.cells import console_text, rows, text


def _fmt(v) -> str:
    if v is None:
        return ""
    if isinstance(v, float):
        return f"{v:,.3f}"
    s = text(v)
    return console_text(s if len(s) <= 90 else s[:87] + "...")


def sheet_table(sheet, max_rows: int | None = None, columns: list[str] | None = None) -> Table:
    if columns is None:
        idx = list(range(len(sheet.columns)))
    else:
        idx = [sheet.columns.index(c) for c in columns if c in sheet.columns]
    t = Table(title=sheet.name, show_lines=False, header_style="bold")
    data = list(rows(sheet))
    for i in idx:
        numeric = any(isinstance(r[i], (int, float)) and not isinstance(r[i], bool) for r in data[:50])
        t.add_column(str(sheet.columns[i]), justify="right" if numeric else "left", overflow="fold")
    for n, r in enumerate(data):
        if max_rows is not None and n >= max_rows:
            break
        t.add_row(*[_fmt(r[i]) for i in idx])
    return t


def print_summary(sheets, console: Console, *, top: int = 15, header: str = "") -> None:
    by = {s.name: s for s in sheets}
    if header:
        console.print(header)
    tl = by.get("gpu_timeline")
    if tl is not None and tl.rows:
        console.print(sheet_table(tl))
    us = by.get("unified_perf_summary")
    if us is not None and us.rows:
        cols = ["name", "input dims", "category", "count", "time sum (µs)", "percent (%)",
                "TFLOP/s mean", "TB/s mean", "bound", "roofline mean (%)"]
        console.print(sheet_table(us, top, cols))
    else:
        ops = by.get("ops_summary")
        if ops is not None:
            console.print(sheet_table(ops, top))
    seen = set()
    for s in sheets:
        for n in s.notes:
            if n not in seen:
                seen.add(n)
                console.print(f"[dim]{console_text(n)}[/dim]", highlight=False)


def print_diff_summary(report, console: Console, top: int = 10) -> None:
    """``perfreport diff`` on a terminal: the totals, the top rows gained or lost, timelines."""
    console.print(f"[bold]{console_text(report.source)}[/bold]", highlight=False)
    console.print(sheet_table(report.sheet("diff_summary")))
    cols = ["match", "status", "name", "input dims", "time A (µs)", "time B (µs)", "delta (µs)",
            "speedup (A/B)", "roofline mean A (%)", "roofline mean B (%)"]
    console.print(sheet_table(report.sheet("diff_ops"), top, cols))
    tl = report.sheet("diff_gpu_timeline")
    if tl.rows:
        console.print(sheet_table(tl))
    for n in report.sheet("diff_summary").notes:
        console.print(f"[dim]{console_text(n)}[/dim]", highlight=False)


def print_summary_multi(report, console: Console, top: int = 15) -> None:
    """A merged multi-rank report on a terminal: ranks, the top ops by rank, collectives."""
    console.print(f"[bold]{console_text(report.source)}[/bold] — {console_text(report.arch_msg)}", highlight=False)
    console.print(sheet_table(report.sheet("ranks"), None, [
        "rank", "rank from", "trace", "kernel time (µs)", "busy (ms)", "exposed comm (ms)",
        "idle (ms)", "collective calls"]))
    console.print(sheet_table(report.sheet("ops_by_rank"), top, [
        "name", "input dims", "time min (µs)", "time median (µs)", "time max (µs)",
        "slowest rank", "max / median"]))
    if "collectives" in report.sheet_names:
        console.print(sheet_table(report.sheet("collectives"), top, [
            "process group", "seq", "collective", "message size (B)", "start skew (µs)",
            "straggler rank", "transfer time (µs)", "algbw (GB/s)", "busbw (GB/s)",
            "busbw of link (%)"]))
    for n in report.notes:
        console.print(f"[dim]{console_text(n)}[/dim]", highlight=False)
