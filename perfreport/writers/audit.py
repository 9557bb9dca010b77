"""``perfreport analyze --audit``: the coverage statement, then the flagged rows by time affected.

Plain lines (no table), so each flag's detail is printed whole.
"""

from __future__ import annotations

from rich.console import Console

from perfreport.tables.audit import audit_sheet
from perfreport.writers.cells import text
from perfreport.writers.console import shorten_middle
from perfreport.tables import columns as C

NAME_WIDTH = 100  # kernel names in the coverage lines, shortened in the middle


NO_FLAGS = "flags: none (no row is above roofline, bimodal, judged on the host link or dependent on an assumption)"


def flag_lines(notes: list[str], records: list[dict], count: int, *, top: int = 30) -> list[str]:
    """The flags part of the audit: totals per tag, then up to ``top`` flagged rows by time
    affected (``records``: rows of :func:`perfreport.tables.audit.audit_sheet`, ``count`` of them
    in all)."""
    if not count:
        return [NO_FLAGS]
    out = [f"flags: {n}" for n in notes]
    out.append("flagged rows, by GPU time affected:")
    for r in records[:top]:
        dims = f" ({r['input dims']})" if r[C.INPUT_DIMS] else ""
        out.append(
            f"  {r['time affected (µs)']:>12,.1f} µs {r['percent of total (%)']:5.1f}%  "
            f"{r['flag']}: {shorten_middle(str(r['name']), NAME_WIDTH)}{dims} x{r['count']}: {r['detail']}"
        )
    if count > min(top, len(records)):
        out.append(f"  ... {count - min(top, len(records))} more: see the flags column of unified_perf_summary")
    return out


def audit_lines(report, *, top: int = 30) -> list[str]:
    if getattr(report, "rank_audits", None):
        return rank_audit_lines(report, top=top)
    out = ["self-audit"]
    if report.coverage is not None:
        out += report.coverage.lines(shorten=lambda s: shorten_middle(s, NAME_WIDTH))
    try:
        unified = report.sheet("unified_perf_summary")
    except KeyError:
        return out + ["flags: no unified_perf_summary sheet, nothing to audit"]
    sheet = audit_sheet(unified)
    return out + flag_lines(sheet.notes, sheet.records(), len(sheet.rows), top=top)


def rank_audit_lines(report, *, top: int = 30) -> list[str]:
    """A merged multi-rank report: the coverage (all ranks, then each), then each rank's flags
    (its own percentages: of that rank's GPU time; the per-rank workbook has every row)."""
    out = [f"self-audit ({len(report.rank_audits)} ranks)"]
    if report.coverage is not None:
        out += report.coverage.lines(shorten=lambda s: shorten_middle(s, NAME_WIDTH))
    for rank, a in sorted(report.rank_audits.items()):
        out.append(f"rank {rank} ({report.rank_paths.get(rank, '')}):")
        out += ["  " + x for x in flag_lines(a.get("notes", []), a.get("rows", []), a.get("count", 0), top=top)]
    return out


def print_audit(report, console: Console, *, top: int = 30) -> None:
    for line in audit_lines(report, top=top):
        console.print(text(line), highlight=False, markup=False, soft_wrap=True)
