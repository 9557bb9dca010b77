"""writers/fit_table.py: a table laid out for a width: one line per cell, numbers whole, flex
columns shortened (middle, end or whole items), optional columns dropped by priority."""

from __future__ import annotations

import io

from rich.console import Console

from perfreport.writers.fit_table import Col, fit, one_line, shorten_end, shorten_items, shorten_middle, split_items


def test_one_line():
    assert one_line(1234567) == "1,234,567"
    assert one_line(1234.5) == "1,234.500"
    assert one_line(None) == "" and one_line(float("nan")) == ""
    assert one_line("a   b ") == "a b"
    assert one_line("a\nb") == "a\\x0ab"  # never folded: a newline is shown escaped
    assert one_line("x\x1by") == "x\\x1by"


def test_shortening():
    assert shorten_middle("abcdefghij", 5) == "ab…ij"
    assert shorten_middle("abcdefghij", 6) == "abc…ij"
    assert shorten_middle("abc", 5) == "abc" and shorten_middle("abc", 1) == "a"
    assert shorten_end("abcdefghij", 5) == "abcd…"
    assert split_items("(8944, 1024), (1024, 2816), 3") == ["(8944, 1024)", " (1024, 2816)", " 3"]
    assert shorten_items("(8944,1024),(1024,2816)", 14) == "(8944,1024)…"
    assert shorten_items("(8944,1024),(1024,2816)", 5) == "…"


COLS = [
    Col("name", flex=True, min=6),
    Col("shape", flex=True, min=6, cut="items", drop=1),
    Col("time", num=True),
    Col("note", drop=2),
    Col("empty"),
]
ROWS = [
    {
        "name": "aten::scaled_dot_product_attention",
        "shape": "(8, 16, 1024, 64), (8, 16, 1024, 64)",
        "time": 1234.5,
        "note": "x",
    },
    {"name": "aten::mm", "shape": "(4, 8)", "time": 7, "note": ""},
]


def test_everything_fits_when_there_is_room():
    f = fit(ROWS, COLS, 200)
    assert [c.head for c in f.cols] == ["name", "shape", "time", "note"] and f.dropped == ["empty"]
    # name 34 wide, shape 36 (its longest cell), time right-aligned to 9 ("1,234.500")
    assert f.lines()[0] == "name".ljust(34) + "  " + "shape".ljust(36) + "  " + "time".rjust(9) + "  note"
    assert f.lines()[2].endswith("1,234.500  x")


def test_narrow_tables_shorten_names_then_drop_optional_columns():
    f = fit(ROWS, COLS, 40)
    assert f.dropped == ["empty"]  # shortening the flex columns to their floor is enough
    assert all(len(line) <= 40 for line in f.lines())
    assert f.lines()[2] == "aten:…tion  …            1,234.500  x"  # shapes lose whole tensors; numbers whole
    f = fit(ROWS, COLS, 24)
    assert f.dropped == ["empty", "note", "shape"]
    assert all(len(line) <= 24 for line in f.lines())


def test_too_narrow_even_at_the_floor_is_wider_than_asked_never_cut():
    f = fit([{"name": "x" * 40, "time": 123456789}], [Col("name", flex=True, min=10), Col("time", num=True)], 8)
    assert f.lines()[-1] == "xxxxx…xxxx  123,456,789"


def test_rich_output_is_the_same_lines():
    f = fit(ROWS, COLS, 60, title="top ops")
    buf = io.StringIO()
    Console(file=buf, width=60, color_system=None).print(f)
    assert buf.getvalue() == f.text()
    assert f.text().splitlines()[0] == "top ops"
