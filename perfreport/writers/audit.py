"""``perfreport analyze --audit``: the coverage statement, then the flagged rows by time affected.

Plain lines (no table), so each flag's detail is printed whole.
"""
from __future__ import annotations

from rich.console import Console

from perfreport.tables.audit import audit_sheet
from perfreport.writers.cells import text
from perfreport.writers.console import shorten_middle

NAME_WIDTH = 100          # kernel names in the coverage lines, shortened in the middle


def audit_lines(report, *, top: int = 30) -> list[str]:
    out = ["self-audit"]
    if report.coverage is not None:
        out += report.coverage.lines(shorten=lambda s: shorten_middle(s, NAME_WIDTH))
    try:
        unified = report.sheet("unified_perf_summary")
    except KeyError:
        return out + ["flags: no unified_perf_summary sheet, nothing to audit"]
    sheet = audit_sheet(unified)
    if not sheet.rows:
        return out + ["flags: none (no row is above roofline, bimodal, judged on the host link "
                      "or dependent on an assumption)"]
    out += [f"flags: {n}" for n in sheet.notes]
    out.append("flagged rows, by GPU time affected:")
    for r in sheet.records()[:top]:
        dims = f" ({r['input dims']})" if r["input dims"] else ""
        out.append(f"  {r['time affected (µs)']:>12,.1f} µs {r['percent of total (%)']:5.1f}%  "
                   f"{r['flag']}: {shorten_middle(str(r['name']), NAME_WIDTH)}{dims} x{r['count']}: {r['detail']}")
    if len(sheet.rows) > top:
        out.append(f"  ... {len(sheet.rows) - top} more: see the flags column of unified_perf_summary")
    return out


def print_audit(report, console: Console, *, top: int = 30) -> None:
    for line in audit_lines(report, top=top):
        console.print(text(line), highlight=False, markup=False, soft_wrap=True)
