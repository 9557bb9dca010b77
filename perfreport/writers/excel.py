"""Excel workbook writer (openpyxl write-only mode: constant memory, streamed rows).

Each sheet: frozen header row, autofilter, fitted column widths, numbers stored as
numbers with the sheet's number formats. Excel caps (1,048,576 rows, 32,767 characters
per cell) are respected and reported in the ``notes`` sheet, never silently.
"""
from __future__ import annotations

from pathlib import Path

from openpyxl import Workbook
from openpyxl.cell import WriteOnlyCell
from openpyxl.styles import Alignment, Font, PatternFill
from openpyxl.utils import get_column_letter

from perfreport.writers.atomic import atomic_path
from perfreport.writers.cells import MAX_CELL, excel_cell, rows

MAX_ROWS = 1_048_575      # data rows below the header
_HEADER_FONT = Font(bold=True)
_HEADER_FILL = PatternFill("solid", fgColor="DDEBF7")
_WRAP = Alignment(wrap_text=True, vertical="top")


def _width(values, header: str) -> float:
    n = len(header)
    for v in values:
        if v is None:
            continue
        s = f"{v:.3f}" if isinstance(v, float) else str(v)
        n = max(n, len(s))
    return min(max(8, n + 2), 80)


def write_workbook(sheets, path: str | Path, notes: list[str] | None = None) -> list[str]:
    """Write ``sheets`` to ``path`` atomically; returns warnings (e.g. truncations)."""
    warnings: list[str] = []
    wb = Workbook(write_only=True)
    for sh in sheets:
        ws = wb.create_sheet(title=sh.name[:31])
        cols = list(sh.columns)
        data = list(rows(sh))
        if len(data) > MAX_ROWS:
            warnings.append(f"{sh.name}: {len(data)} rows; Excel keeps the first {MAX_ROWS} (CSV has all)")
            data = data[:MAX_ROWS]
        sample = data[:2000]
        for i, c in enumerate(cols, start=1):
            w = _width((r[i - 1] for r in sample), str(c))
            ws.column_dimensions[get_column_letter(i)].width = w
        ws.freeze_panes = "A2"
        if cols:
            ws.auto_filter.ref = f"A1:{get_column_letter(len(cols))}{max(1, len(data) + 1)}"
        header = []
        for c in cols:
            cell = WriteOnlyCell(ws, value=str(c))
            cell.font = _HEADER_FONT
            cell.fill = _HEADER_FILL
            cell.alignment = _WRAP
            header.append(cell)
        ws.append(header)
        fmts = [sh.formats.get(c) for c in cols]
        truncated = 0
        for r in data:
            out = []
            for v, f in zip(r, fmts):
                if isinstance(v, str):          # trace text: a text cell, safe, within limits
                    cell, cut = excel_cell(ws, v)
                    truncated += cut
                    out.append(cell)
                elif f is not None and isinstance(v, (int, float)) and not isinstance(v, bool):
                    cell = WriteOnlyCell(ws, value=v)
                    cell.number_format = f
                    out.append(cell)
                else:
                    out.append(v)
            ws.append(out)
        if truncated:
            warnings.append(f"{sh.name}: {truncated} cells over {MAX_CELL} characters were shortened")
    all_notes = list(notes or [])
    by_note: dict[str, list[str]] = {}
    for sh in sheets:
        for n in sh.notes:
            by_note.setdefault(n, []).append(sh.name)
    all_notes += [f"{', '.join(names)}: {n}" for n, names in by_note.items()]
    all_notes += warnings
    if all_notes:
        ws = wb.create_sheet(title="notes")
        ws.column_dimensions["A"].width = 120
        ws.append(["notes"])
        for n in all_notes:
            ws.append([excel_cell(ws, n)[0]])
    with atomic_path(path, suffix=".xlsx") as tmp:
        wb.save(tmp)
    return warnings
