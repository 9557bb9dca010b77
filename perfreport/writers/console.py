"""Rich console output: the terminal summary and single-sheet tables."""
from __future__ import annotations

from rich.console import Console
from rich.table import Table

from perfreport.writers.cells import rows


def _fmt(v) -> str:
    if v is None:
        return ""
    if isinstance(v, float):
        return f"{v:,.3f}"
    s = str(v)
    return s if len(s) <= 90 else s[:87] + "..."


def sheet_table(sheet, max_rows: int | None = None, columns: list[str] | None = None) -> Table:
    df = sheet.df if columns is None else sheet.df[[c for c in columns if c in sheet.df.columns]]
    t = Table(title=sheet.name, show_lines=False, header_style="bold")
    for c in df.columns:
        numeric = df[c].dtype.kind in "if"
        t.add_column(str(c), justify="right" if numeric else "left", overflow="fold")
    for i, r in enumerate(rows(df)):
        if max_rows is not None and i >= max_rows:
            break
        t.add_row(*[_fmt(v) for v in r])
    return t


def print_summary(sheets, console: Console, *, top: int = 15, header: str = "") -> None:
    by = {s.name: s for s in sheets}
    if header:
        console.print(header)
    tl = by.get("gpu_timeline")
    if tl is not None and not tl.df.empty:
        console.print(sheet_table(tl))
    us = by.get("unified_perf_summary")
    if us is not None and not us.df.empty:
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
                console.print(f"[dim]{n}[/dim]", highlight=False)
