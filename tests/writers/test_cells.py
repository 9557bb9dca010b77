"""writers/cells.py: plain values for writers, and untrusted trace text made safe per output."""

from __future__ import annotations

import numpy as np
import pytest

from perfreport.tables.sheet import Sheet
from perfreport.writers.cells import (
    MAX_CELL,
    TRUNCATED,
    console_text,
    csv_field,
    excel_text,
    plain,
    rows,
    text,
)


class Name(str):
    pass


class Count(int):
    pass


@pytest.mark.parametrize(
    ("v", "want", "kind"),
    [
        (np.float64(1.5), 1.5, float),
        (np.int32(7), 7, int),
        (np.bool_(True), True, bool),
        (float("nan"), None, type(None)),
        (np.float32("inf"), None, type(None)),
        (Name("x"), "x", str),
        (Count(3), 3, int),
        (True, True, bool),
        (None, None, type(None)),
    ],
)
def test_plain(v, want, kind):
    got = plain(v)
    assert got == want and type(got) is kind


def test_rows_are_plain():
    sheet = Sheet("s", ["a", "b", "c"], [[np.int64(2), float("inf"), "x"], [1.25, None, Name("y")]])
    out = list(rows(sheet))
    assert out == [[2, None, "x"], [1.25, None, "y"]]
    assert type(out[0][0]) is int and type(out[1][2]) is str


def test_text_escapes_control_and_bidi_characters():
    assert text("a\x1b[31mb") == "a\\x1b[31mb"
    assert text("evil\u202ename") == "evil\\u202ename"
    assert text(42) == "42"


def test_excel_text_is_cut_with_a_marker():
    s, cut = excel_text("x" * (MAX_CELL + 5))
    assert cut and len(s) == MAX_CELL and s.endswith(TRUNCATED)
    assert excel_text("=SUM(A1)") == ("=SUM(A1)", False)


@pytest.mark.parametrize(
    ("v", "want"),
    [("=cmd", "'=cmd"), ("+1", "'+1"), ("-x", "'-x"), ("@a", "'@a"), ("\tt", "\\x09t"), ("ok", "ok"), (3.5, 3.5)],
)
def test_csv_field_neutralises_formula_starts(v, want):
    assert csv_field(v) == want


def test_console_text_shows_markup():
    assert console_text("[red]x[/red]") == "\\[red]x\\[/red]"


def test_shared_columns_works_a_sheets_columns_out_once_and_forgets_them_after():
    from perfreport.writers.cells import columns, shared_columns

    sh = Sheet("s", ["a", "b"], [[1, "x"], [2.5, "y"]])
    assert columns(sh) is not columns(sh)  # outside the scope: made afresh
    with shared_columns():
        first = columns(sh)
        assert first == [[1, 2.5], ["x", "y"]] and columns(sh) is first
        with shared_columns():  # a nested open keeps the outer one's
            assert columns(sh) is first
        sh.rows = [[3, "z"]]  # other rows: worked out again
        assert columns(sh) == [[3], ["z"]] and columns(sh) is not first
    assert columns(sh) is not columns(sh)
