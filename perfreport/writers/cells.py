"""Cell values for writers: plain Python values, and trace text made safe for each output.

Trace names are untrusted text. Every writer routes them through here:

- :func:`plain`: numpy scalars to Python values, NaN/inf to empty (never ``np.float64(...)``);
- :func:`text`: control characters, ANSI escapes and bidi overrides shown as ``\\xNN`` /
  ``\\uNNNN``, lone surrogates as U+FFFD (:func:`perfreport.errors.printable`);
- :func:`excel_text`: that text for a *text* cell (a name starting with ``=`` is never a
  formula), cut to Excel's 32,767-character limit with a visible marker;
- :func:`csv_field`: that text with a leading ``'`` when it starts with ``=``, ``+``, ``-``,
  ``@``, tab or CR (the usual CSV-injection mitigation: a spreadsheet shows the text, and
  the ``'`` says the field was changed);
- :func:`console_text`: that text with rich markup escaped (``[red]`` is shown, not applied).
"""

from __future__ import annotations

import math
import threading
from contextlib import contextmanager

import numpy as np

from perfreport.errors import printable

MAX_CELL = 32_767  # Excel's limit on the characters in one cell
TRUNCATED = " …[truncated]"
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def plain(v):
    """A plain Python value: numpy scalars as Python ones, NaN/inf as None, and subclasses of
    str, int and float as the base type (so writers may test ``type(v) is str``)."""
    if v is None:
        return None
    if isinstance(v, np.generic):
        v = v.item()
    if isinstance(v, float) and (math.isnan(v) or math.isinf(v)):
        return None
    t = type(v)
    if t is not str and t is not int and t is not float and t is not bool:
        if isinstance(v, str):
            return str(v)
        if isinstance(v, float):
            return float(v)
        if isinstance(v, int) and not isinstance(v, bool):
            return int(v)
    return v


_PLAIN = frozenset({str, int, bool, type(None)})


def rows(sheet):
    """The sheet's rows as plain values (:func:`plain`); str, int, bool, None and finite floats
    are taken as they are without a call (``v - v == 0`` is false for NaN and inf)."""
    for rec in sheet.rows:
        yield [v if (t := type(v)) in _PLAIN or (t is float and v - v == 0) else plain(v) for v in rec]


_NUMPY_TO = {np.float64: float, np.float32: float, np.int64: int, np.int32: int}


_SHARED = threading.local()  # .memo: {id(sheet): (sheet, its rows, its columns)} while shared_columns() is open


@contextmanager
def shared_columns():
    """While open (in this thread), :func:`columns` is worked out once per sheet and handed to
    every writer that asks: the workbook and the CSVs of one run read the same columns (the
    command line writes both in one; a wide trace: ~0.07-0.11 CPU s a run). What it hands out is
    shared: treat it as read-only. Closed, nothing is kept. Nested opens keep the outer one's."""
    if getattr(_SHARED, "memo", None) is not None:
        yield
        return
    _SHARED.memo = {}
    try:
        yield
    finally:
        _SHARED.memo = None


def columns(sheet) -> list[list] | None:
    """The sheet's values column by column, as :func:`rows` gives them (the same values), or None
    when a row's length is not the number of columns. A column of one plain type is taken as it
    is, and one of numpy floats or ints converted, at C speed (no call per value). Inside
    :func:`shared_columns`, made once per sheet (and the same rows)."""
    memo = getattr(_SHARED, "memo", None)
    if memo is not None:
        hit = memo.get(id(sheet))
        if hit is not None and hit[0] is sheet and hit[1] is sheet.rows:
            return hit[2]
        out = _columns(sheet)
        memo[id(sheet)] = (sheet, sheet.rows, out)
        return out
    return _columns(sheet)


def _columns(sheet) -> list[list] | None:
    width = len(sheet.columns)
    data = sheet.rows
    if any(len(r) != width for r in data):
        return None
    if not data:
        return [[] for _ in range(width)]
    return [_plain_column(c) for c in zip(*data)]


def _plain_column(col: tuple) -> list:
    types = set(map(type, col))
    if len(types) == 1:
        t = next(iter(types))
        if t in _PLAIN:
            return list(col)
        conv = _NUMPY_TO.get(t)
        if conv is not None:
            col = tuple(map(conv, col))
            t = conv
        if t is float and all(map(math.isfinite, col)):
            return list(col)
    return [v if (t := type(v)) in _PLAIN or (t is float and v - v == 0) else plain(v) for v in col]


def text(s) -> str:
    return printable(s if isinstance(s, str) else str(s))


def excel_text(s: str) -> tuple[str, bool]:
    """(safe text within Excel's cell limit, whether it was cut)."""
    s = text(s)
    if len(s) > MAX_CELL:
        return s[: MAX_CELL - len(TRUNCATED)] + TRUNCATED, True
    return s, False


def csv_field(v):
    if isinstance(v, str):
        v = text(v)
        if v.startswith(_FORMULA_START):
            return "'" + v
        return v
    return v


def console_text(s) -> str:
    from rich.markup import escape

    return escape(text(s))


__all__ = [
    "plain",
    "rows",
    "columns",
    "shared_columns",
    "text",
    "excel_text",
    "csv_field",
    "console_text",
    "MAX_CELL",
    "TRUNCATED",
]
