"""Excel workbook writer (openpyxl write-only mode: constant memory, streamed rows).

Sheet order: ``unified_perf_summary`` (the roofline table, leading with name, category, time,
share, roofline %, bound, flags), ``notes`` (GPU spec used, trace facts, coverage, warnings),
``columns`` (unit, formula and source of every column), then the other sheets.

Each sheet: header row and first column frozen, autofilter, numbers stored as numbers with a
number format whose widest text fits its column (widths are computed from the format actually
applied, so no cell shows ``###``), a data bar on the roofline % columns. Excel caps
(1,048,576 rows, 32,767 characters per cell) are respected and reported, never silently.
"""

from __future__ import annotations

import contextlib
import gc
import math
import os
import re
import sys
from pathlib import Path

from openpyxl import Workbook
from openpyxl.cell import WriteOnlyCell
from openpyxl.formatting.rule import DataBarRule
from openpyxl.styles import Alignment, Font, PatternFill
from openpyxl.utils import get_column_letter

from perfreport.errors import BadInput
from perfreport.writers.atomic import atomic_path
from perfreport.writers.cells import MAX_CELL, excel_cell, rows, text
from perfreport.writers.column_docs import columns_rows
from perfreport.writers.summary import UNIFIED, WORKBOOK_LEAD, spec_facts
from perfreport.tables import columns as C

MAX_ROWS = 1_048_575  # data rows below the header
MIN_WIDTH, MAX_TEXT_WIDTH = 6, 48
_HEADER_FONT = Font(bold=True)
_HEADER_FILL = PatternFill("solid", fgColor="DDEBF7")
_WRAP = Alignment(wrap_text=True, vertical="top")
_FMT_RX = re.compile(r"^(#,##)?0(\.(0+))?$")
DATA_BAR_COLUMNS = (C.ROOFLINE_MEAN_PCT, C.ROOFLINE_MEDIAN_PCT)


def number_format(fmt: str | None, values) -> str:
    """The Excel format for a numeric column: the sheet's ``0.000``-style format (or one chosen
    by type) with thousands separators, so 262422.4 reads ``262,422.400``."""
    if fmt is None:
        fmt = "0" if all(isinstance(v, int) for v in values if v is not None) else "0.000"
    m = _FMT_RX.match(fmt)
    if m is None:
        return fmt
    return "#,##0" + (m.group(2) or "")


def formatted_len(v, fmt: str) -> int:
    """Characters ``v`` takes when shown with ``fmt`` (the ``#,##0.000`` family)."""
    m = _FMT_RX.match(fmt)
    if m is None or not isinstance(v, (int, float)) or isinstance(v, bool) or not math.isfinite(v):
        return len(str(v))
    nd = len(m.group(3) or "")
    return len(f"{v:,.{nd}f}" if m.group(1) else f"{v:.{nd}f}")


def _longest_word(header: str) -> int:
    return max((len(w) for w in header.split()), default=0)


def column_width(header: str, values, fmt: str | None) -> float:
    """Width that shows every value in full: numbers by their formatted text, text up to
    :data:`MAX_TEXT_WIDTH` characters; the header wraps onto two lines at its spaces."""
    n = 0
    text = False
    for v in values:
        if v is None:
            continue
        if fmt is not None and isinstance(v, (int, float)) and not isinstance(v, bool):
            n = max(n, formatted_len(v, fmt))
        else:
            text = True
            n = max(n, len(str(v)))
    head = len(header) if len(header) <= 14 else max(_longest_word(header), (len(header) + 1) // 2)
    w = max(n, head, MIN_WIDTH) + 2
    return float(min(w, MAX_TEXT_WIDTH) if text else w)


def ordered(sheet) -> tuple[list[str], list[int]]:
    """Column order the workbook shows: the unified sheet leads with :data:`WORKBOOK_LEAD`."""
    cols = [str(c) for c in sheet.columns]
    if sheet.name != UNIFIED:
        return cols, list(range(len(cols)))
    lead = [c for c in WORKBOOK_LEAD if c in cols]
    order = lead + [c for c in cols if c not in lead]
    return order, [cols.index(c) for c in order]


def _write_sheet(
    wb,
    title: str,
    header: list[str],
    data: list[list],
    formats: dict,
    *,
    freeze: str = "B2",
    bars=(),
    widths: dict | None = None,
):
    ws = wb.create_sheet(title=title[:31])
    sample = data[:5000]
    fmts = []
    for i, c in enumerate(header):
        col = [r[i] for r in sample]
        nums = [v for v in col if isinstance(v, (int, float)) and not isinstance(v, bool)]
        f = number_format(formats.get(c), nums) if nums else None
        fmts.append(f)
        w = (widths or {}).get(c) or column_width(c, col, f)
        ws.column_dimensions[get_column_letter(i + 1)].width = w
    ws.freeze_panes = freeze
    ws.page_setup.orientation = "landscape"  # printing: header row and first column on
    ws.page_setup.scale = 60
    ws.print_title_rows = "1:1"  # every page, as frozen on screen
    if freeze == "B2":
        ws.print_title_cols = "A:A"
    if header:
        last = get_column_letter(len(header))
        ws.auto_filter.ref = f"A1:{last}{max(1, len(data) + 1)}"
    if any(len(c) > 14 for c in header):
        ws.row_dimensions[1].height = 30  # two lines of wrapped header text
    for c in bars:
        if c in header and data:
            letter = get_column_letter(header.index(c) + 1)
            ws.conditional_formatting.add(
                f"{letter}2:{letter}{len(data) + 1}",
                DataBarRule(
                    start_type="num", start_value=0, end_type="num", end_value=100, color="5B9BD5", showValue=True
                ),
            )
    cells = []
    for c in header:
        cell, _ = excel_cell(ws, c)
        cell.font = _HEADER_FONT
        cell.fill = _HEADER_FILL
        cell.alignment = _WRAP
        cells.append(cell)
    ws.append(cells)
    for r in data:
        out = []
        for v, f in zip(r, fmts):
            if isinstance(v, str):  # trace text: a text cell, safe, within limits
                out.append(excel_cell(ws, v)[0])
            elif f is not None and isinstance(v, (int, float)) and not isinstance(v, bool):
                cell = WriteOnlyCell(ws, value=v)
                cell.number_format = f
                out.append(cell)
            else:
                out.append(v)
        ws.append(out)
    return ws


def _clip(data: list[list], name: str, warnings: list[str], cut: dict) -> list[list]:
    """Excel's row cap, and a warning for the text cells :func:`excel_cell` will cut (counted
    up front: the notes sheet, written second, lists them)."""
    if len(data) > MAX_ROWS:
        warnings.append(f"{name}: {len(data)} rows; Excel keeps the first {MAX_ROWS} (CSV has all)")
        data = data[:MAX_ROWS]
    n = sum(
        1
        for r in data
        for v in r  # an escape is at most 6 characters per one
        if isinstance(v, str) and len(v) > MAX_CELL // 6 and len(text(v)) > MAX_CELL
    )
    if n:
        cut[name] = n
    return data


def notes_rows(sheets, notes, spec=None, coverage=None) -> list[list[str]]:
    """(about, note) rows of the notes sheet: coverage (a line or a list of lines), report
    notes, GPU spec details, sheet notes."""
    cov = [coverage] if isinstance(coverage, str) else list(coverage or [])
    out: list[list[str]] = [["coverage" if i == 0 else "coverage detail", line] for i, line in enumerate(cov)]
    for n in notes or []:
        if n in cov:
            continue
        about, _, rest = n.partition(": ")
        out.append([about, rest] if rest and len(about) <= 40 else ["report", n])
    if spec is not None:  # the "GPU spec: ..." line is in the notes already
        out += [[a, b] for a, b in spec_facts(spec)[1:]]
    by_note: dict[str, list[str]] = {}
    for sh in sheets:
        for n in sh.notes:
            if n not in cov:
                by_note.setdefault(n, []).append(sh.name)
    out += [[", ".join(names), n] for n, names in by_note.items()]
    return out


def write_workbook(sheets, path: str | Path, notes: list[str] | None = None, *, spec=None, coverage=None) -> list[str]:
    """Write ``sheets`` to ``path`` atomically; returns warnings (e.g. truncations).
    A write error (disk full, a size limit) is one :class:`BadInput` line; nothing is left."""
    hook = sys.unraisablehook
    spooled = _spooled()
    try:
        try:
            return _write(sheets, path, notes, spec, coverage)
        except OSError as exc:  # openpyxl spools rows to temporary files: a full disk shows here
            sys.unraisablehook = _ignore  # its half-written sheets complain when freed
            kept = "; the previous file is unchanged" if Path(path).exists() else ""
            err = BadInput(str(path), f"write failed ({exc.strerror or exc}); nothing written{kept}")
        except BadInput as exc:  # from atomic_path: its traceback holds the failed save's
            sys.unraisablehook = _ignore  # open archive, which fails again when freed
            err = BadInput(exc.source, exc.problem)
        except BaseException:  # an interrupt: the same quiet cleanup, then unwind
            sys.unraisablehook = _ignore
            raise
        gc.collect()  # the failed writer's objects, freed here rather than at exit
    finally:
        sys.unraisablehook = hook
        _remove_spooled(spooled)
    raise err


def _spooled() -> set:
    """openpyxl's write-only sheets spool to temporary files in $TMPDIR, removed by an atexit
    hook that a pool worker never runs: the names known before a write."""
    from openpyxl.worksheet import _writer

    return set(getattr(_writer, "ALL_TEMP_FILES", ()))


def _remove_spooled(before: set) -> None:
    """Remove the spool files this write left (a failed or interrupted save leaves them)."""
    from openpyxl.worksheet import _writer

    files = getattr(_writer, "ALL_TEMP_FILES", None)
    for f in [f for f in (files or ()) if f not in before]:
        with contextlib.suppress(OSError):
            os.remove(f)
        with contextlib.suppress(ValueError):
            files.remove(f)


def _ignore(unraisable) -> None:
    return None


def _write(sheets, path, notes, spec, coverage) -> list[str]:
    warnings: list[str] = []
    prepared = []
    cut: dict[str, int] = {}
    for sh in sheets:
        header, idx = ordered(sh)
        data = _clip([[r[i] for i in idx] for r in rows(sh)], sh.name, warnings, cut)
        prepared.append((sh, header, data))
    if cut:  # one line for all sheets: the text is whole in the CSV and JSON
        warnings.append(
            f"{sum(cut.values())} cells over {MAX_CELL} characters were shortened "
            f"(sheets: {', '.join(cut)}; the CSV output has them whole)"
        )
    prepared.sort(key=lambda p: p[0].name != UNIFIED)  # stable: unified first
    wb = Workbook(write_only=True)
    first, rest = prepared[:1], prepared[1:]
    for sh, header, data in first:
        _write_sheet(wb, sh.name, header, data, sh.formats, bars=DATA_BAR_COLUMNS)
    nrows = notes_rows(sheets, notes, spec, coverage) + [["warning", w] for w in warnings]
    _write_sheet(wb, "notes", ["about", "note"], nrows, {}, freeze="A2", widths={"note": 140})
    _write_sheet(
        wb,
        "columns",
        ["column", "unit", "formula / meaning", "source", "sheets"],
        columns_rows(sheets),
        {},
        widths={"formula / meaning": 90, "sheets": 60},
    )
    for sh, header, data in rest:
        _write_sheet(wb, sh.name, header, data, sh.formats, bars=DATA_BAR_COLUMNS)
    with atomic_path(path, suffix=".xlsx") as tmp:
        wb.save(tmp)
    return warnings
