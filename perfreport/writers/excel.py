"""Excel workbook writer: the report's layout; the package itself is :mod:`perfreport.writers.xlsx`.

Sheet order: ``unified_perf_summary`` (the roofline table, leading with name, category, time,
share, roofline %, bound, flags), ``notes`` (GPU spec used, trace facts, coverage, warnings),
``columns`` (unit, formula and source of every column), then the other sheets.

Each sheet: header row and first column frozen, autofilter, numbers stored as numbers with a
number format whose widest text fits its column (widths are computed from the format actually
applied, so no cell shows ``###``), a data bar on the roofline % columns; printed landscape,
fitted to the page width, the header row (and first column) on every page. Excel caps
(1,048,576 rows, 32,767 characters per cell) are respected and reported, never silently.
"""

from __future__ import annotations

import gc
import math
import re
import sys
from pathlib import Path

from perfreport.errors import BadInput
from perfreport.writers.atomic import atomic_path
from perfreport.writers.cells import MAX_CELL, columns, excel_text, rows, text
from perfreport.writers.column_docs import columns_rows
from perfreport.writers.summary import UNIFIED, WORKBOOK_LEAD, spec_facts
from perfreport.tables import columns as C
from perfreport.writers.xlsx import SheetPart, write_package

MAX_ROWS = 1_048_575  # data rows below the header
MIN_WIDTH, MAX_TEXT_WIDTH = 6, 48
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


def _widest(nums: list, fmt: str) -> list:
    """The numbers whose formatted text may be the longest: under a ``#,##0.000``-family format
    the text grows with the magnitude (rounding is monotonic), so the largest and the smallest
    finite value (the most negative one, with its sign) and any non-finite one."""
    if _FMT_RX.match(fmt) is None:
        return nums
    fin = [v for v in nums if math.isfinite(v)]
    return ([max(fin), min(fin)] if fin else []) + (
        [v for v in nums if not math.isfinite(v)] if len(fin) < len(nums) else []
    )


def _is_number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _longest_word(header: str) -> int:
    return max((len(w) for w in header.split()), default=0)


def column_width(header: str, values, fmt: str | None) -> float:
    """Width that shows every value in full: numbers by their formatted text, text up to
    :data:`MAX_TEXT_WIDTH` characters; the header wraps onto two lines at its spaces."""
    types = set(map(type, values))
    if types <= _TEXT_OR_NONE or (fmt is not None and types <= _NUMBERS_OR_NONE):
        present = values if type(None) not in types else [v for v in values if v is not None]
        text = str in types
        n = max(map(len, present), default=0) if text else 0
        nums = [] if text else present
    else:
        n, text, nums = _scan(values, fmt is not None)
    if nums:
        n = max(n, max(formatted_len(v, fmt) for v in _widest(nums, fmt)))
    head = len(header) if len(header) <= 14 else max(_longest_word(header), (len(header) + 1) // 2)
    w = max(n, head, MIN_WIDTH) + 2
    return float(min(w, MAX_TEXT_WIDTH) if text else w)


_NUMBERS_OR_NONE, _TEXT_OR_NONE = {float, int, type(None)}, {str, type(None)}


def _scan(values, num_ok: bool) -> tuple[int, bool, list]:
    """(longest text, whether there is text, the numbers) of a column of mixed values."""
    n = 0
    text = False
    nums = []
    for v in values:
        if v is None:
            continue
        t = type(v)
        if num_ok and (t is float or t is int or (t is not bool and t is not str and _is_number(v))):
            nums.append(v)
        else:
            text = True
            k = len(v) if t is str else len(str(v))
            if k > n:
                n = k
    return n, text, nums


def ordered(sheet) -> tuple[list[str], list[int]]:
    """Column order the workbook shows: the unified sheet leads with :data:`WORKBOOK_LEAD`."""
    cols = [str(c) for c in sheet.columns]
    if sheet.name != UNIFIED:
        return cols, list(range(len(cols)))
    lead = [c for c in WORKBOOK_LEAD if c in cols]
    order = lead + [c for c in cols if c not in lead]
    return order, [cols.index(c) for c in order]


def sheet_part(
    title: str,
    header: list[str],
    data: list[list],
    formats: dict,
    *,
    freeze: str = "B2",
    bars=(),
    widths: dict | None = None,
) -> SheetPart:
    """The laid-out sheet of ``data``, one list of values per ``header`` column (see
    :func:`by_column`): number formats and widths fitted to the first 5,000 rows, data bars, the
    header row two lines high when a header wraps."""
    n = len(data[0]) if data else 0
    fmts, ws = [], []
    for c, values in zip(header, data):
        col = values[:5000]
        types = set(map(type, col))
        if types <= _NUMBERS_OR_NONE:
            nums = col if type(None) not in types else [v for v in col if v is not None]
        elif types <= _TEXT_OR_NONE:
            nums = []
        else:
            nums = [
                v
                for v in col
                if (t := type(v)) is float or t is int or (t is not str and t is not bool and _is_number(v))
            ]
        f = number_format(formats.get(c), nums) if nums else None
        fmts.append(f)
        ws.append((widths or {}).get(c) or column_width(c, col, f))
    return SheetPart(
        title=title[:31],
        header=header,
        columns=data,
        n_rows=n,
        formats=fmts,
        widths=ws,
        freeze=freeze,
        bars=[header.index(c) for c in bars if c in header and n],
        header_height=30 if any(len(c) > 14 for c in header) else None,  # two lines of wrapped header text
    )


def by_column(data: list[list], width: int) -> list[list]:
    """Rows as one list per column (a short row's missing cells are None: no cell)."""
    if any(len(r) != width for r in data):
        data = [(list(r) + [None] * width)[:width] for r in data]
    return [list(c) for c in zip(*data)] if data else [[] for _ in range(width)]


def _clip(cols: list[list], name: str, warnings: list[str], cut: dict) -> list[list]:
    """Excel's row cap, and a warning for the text cells :func:`excel_text` will cut (counted
    up front: the notes sheet, written second, lists them)."""
    n_rows = len(cols[0]) if cols else 0
    if n_rows > MAX_ROWS:
        warnings.append(f"{name}: {n_rows} rows; Excel keeps the first {MAX_ROWS} (CSV has all)")
        cols = [c[:MAX_ROWS] for c in cols]
    short = MAX_CELL // 6  # an escape is at most 6 characters per one
    n = 0
    for c in cols:  # columns() gives exact str (no subclasses), so a type check finds every text
        types = set(map(type, c))
        if str not in types:
            continue
        texts = c if len(types) == 1 else [v for v in c if type(v) is str]
        if max(map(len, texts)) > short:
            n += sum(1 for v in texts if len(v) > short and len(text(v)) > MAX_CELL)
    if n:
        cut[name] = n
    return cols


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
    try:
        try:
            return _write(sheets, path, notes, spec, coverage)
        except OSError as exc:  # a write outside the atomic temporary (atomic_path reports its own)
            sys.unraisablehook = _ignore  # a half-written zip member complains when freed
            kept = "; the previous file is unchanged" if Path(path).exists() else ""
            err = BadInput(str(path), f"write failed ({exc.strerror or exc}); nothing written{kept}")
        except BadInput as exc:  # from atomic_path: its traceback holds the failed write's
            sys.unraisablehook = _ignore  # open zip archive, which fails again when freed
            err = BadInput(exc.source, exc.problem)
        except BaseException:  # an interrupt: the same quiet cleanup, then unwind
            sys.unraisablehook = _ignore
            raise
        gc.collect()  # the failed writer's objects, freed here rather than at exit
    finally:
        sys.unraisablehook = hook
    raise err


def _ignore(unraisable) -> None:
    return None


def _shown(s: str) -> str:
    return excel_text(s)[0]


def _write(sheets, path, notes, spec, coverage) -> list[str]:
    warnings: list[str] = []
    prepared = []
    cut: dict[str, int] = {}
    for sh in sheets:
        header, idx = ordered(sh)
        cols = columns(sh)
        if cols is None:  # a row of another length than the header: as the rows give it
            cols = by_column(list(rows(sh)), len(sh.columns))
        data = _clip([cols[i] for i in idx], sh.name, warnings, cut)
        prepared.append((sh, header, data))
    if cut:  # one line for all sheets: the text is whole in the CSV and JSON
        warnings.append(
            f"{sum(cut.values())} cells over {MAX_CELL} characters were shortened "
            f"(sheets: {', '.join(cut)}; the CSV output has them whole)"
        )
    prepared.sort(key=lambda p: p[0].name != UNIFIED)  # stable: unified first
    first, rest = prepared[:1], prepared[1:]
    parts = [sheet_part(sh.name, header, data, sh.formats, bars=DATA_BAR_COLUMNS) for sh, header, data in first]
    nrows = notes_rows(sheets, notes, spec, coverage) + [["warning", w] for w in warnings]
    parts.append(sheet_part("notes", ["about", "note"], by_column(nrows, 2), {}, freeze="A2", widths={"note": 140}))
    parts.append(
        sheet_part(
            "columns",
            ["column", "unit", "formula / meaning", "source", "sheets"],
            by_column(columns_rows(sheets), 5),
            {},
            widths={"formula / meaning": 90, "sheets": 60},
        )
    )
    parts += [sheet_part(sh.name, header, data, sh.formats, bars=DATA_BAR_COLUMNS) for sh, header, data in rest]
    with atomic_path(path, suffix=".xlsx") as tmp:
        write_package(tmp, parts, _shown)
    return warnings
