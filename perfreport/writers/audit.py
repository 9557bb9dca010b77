"""``perfreport analyze --audit``: the coverage statement, then the flagged rows, grouped by flag.

Plain lines (no table), so each flag's detail is printed whole, wrapped at word boundaries
(never inside a word) when a width is given:

* the totals per flag kind, largest GPU time first (so a single ``above roofline`` row is in
  the first lines however many ``host link`` rows there are);
* then one group per kind, in the same order: up to ``top`` rows by GPU time affected, each
  with its time, share, name (shortened in the middle), shapes (``12×192, 8×64×192``, not
  Python tuples) and call count, and the flag's detail indented under it.
"""

from __future__ import annotations

from perfreport.tables import columns as C

import textwrap

from rich.console import Console
from rich.text import Text

from perfreport.tables.audit import audit_sheet, audit_totals
from perfreport.writers.fit_table import one_line, shorten_middle, split_items

NAME_WIDTH = 100  # kernel names in the coverage lines, shortened in the middle


NO_FLAGS = "flags: none (no row is above roofline, bimodal, judged on the host link or dependent on an assumption)"


def shape_text(dims) -> str:
    """``(12, 192), (8, 64, 192), (8), (), ()`` -> ``12×192, 8×64×192, 8``: each tensor as
    its sizes joined by ×, a tensor list in brackets, trailing scalars (``()``) left out."""
    items = [i.strip() for i in split_items(one_line(dims or ""))]
    out = []
    for it in items:
        if it.startswith("[") and it.endswith("]"):
            out.append("[" + ", ".join(shape_text(x) or "()" for x in split_items(it[1:-1])) + "]")
        elif it.startswith("(") and it.endswith(")"):
            inner = [x.strip() for x in it[1:-1].split(",") if x.strip()]
            out.append("×".join(inner) if inner else "()")
        elif it:
            out.append(it)
    while out and out[-1] == "()":
        out.pop()
    return ", ".join(out)


def _count(n) -> str:
    return f"{n:,}" if isinstance(n, int) else str(n)


def flag_lines(notes: list[str], records: list[dict], count: int, *, top: int = 10) -> list[str]:
    """The flags part of the audit (``records``: rows of
    :func:`perfreport.tables.audit.audit_sheet`, ``count`` of them in all; ``notes``: its
    totals per kind): the totals, then each kind's rows, up to ``top`` per kind."""
    if not count:
        return [NO_FLAGS]
    out = [f"flags: {n}" for n in notes]
    for tag in audit_totals(records):
        group = [r for r in records if r["flag"] == tag]
        out.append(f"{tag}, by GPU time affected:")
        for r in group[:top]:
            shape = shape_text(r.get(C.INPUT_DIMS))
            out.append(
                f"  {r['time affected (µs)']:>12,.1f} µs {r['percent of total (%)']:5.1f}%  "
                f"{shorten_middle(str(r['name']), NAME_WIDTH)}{f' [{shape}]' if shape else ''} x{_count(r['count'])}"
            )
            out.append(f"      {one_line(r['detail'])}")
        if len(group) > top:
            out.append(f"  ... {len(group) - top} more {tag} rows: see the flags column of unified_perf_summary")
    if count > len(records):
        out.append(f"  ... {count - len(records)} more flagged rows not listed: see unified_perf_summary")
    return out


def audit_lines(report, *, top: int = 10) -> list[str]:
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


def rank_audit_lines(report, *, top: int = 10) -> list[str]:
    """A merged multi-rank report: the coverage (all ranks, then each), then each rank's flags
    (its own percentages: of that rank's GPU time; the per-rank workbook has every row)."""
    out = [f"self-audit ({len(report.rank_audits)} ranks)"]
    if report.coverage is not None:
        out += report.coverage.lines(shorten=lambda s: shorten_middle(s, NAME_WIDTH))
    for rank, a in sorted(report.rank_audits.items()):
        out.append(f"rank {rank} ({report.rank_paths.get(rank, '')}):")
        out += ["  " + x for x in flag_lines(a.get("notes", []), a.get("rows", []), a.get("count", 0), top=top)]
    return out


def wrap(line: str, width: int) -> list[str]:
    """``line`` in lines of at most ``width`` characters, broken at spaces only (a word longer
    than the width stays whole on its own line); continuation lines are indented by the line's
    own indent (at most 4) plus 2."""
    indent = len(line) - len(line.lstrip(" "))
    return textwrap.wrap(
        line,
        width=max(20, width),
        subsequent_indent=" " * (min(indent, 4) + 2),
        break_long_words=False,
        break_on_hyphens=False,
    ) or [line]


def print_audit(report, console: Console, *, top: int = 10) -> None:
    """The audit on ``console``, wrapped at word boundaries to its width."""
    for line in audit_lines(report, top=top):
        for part in wrap(line, console.width - 1):
            console.print(Text(part, no_wrap=True, overflow="ignore"))


__all__ = ["audit_lines", "flag_lines", "print_audit", "rank_audit_lines", "shape_text", "wrap"]
