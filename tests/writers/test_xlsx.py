"""The workbook package written directly (perfreport/writers/xlsx.py), read back with openpyxl:
every format the report's workbook carries (frozen panes, widths, number formats, header style,
data bars, autofilter, print setup) and the cell kinds (text never a formula, numbers, booleans)."""

from __future__ import annotations

import zipfile

import pytest
from openpyxl import load_workbook

from perfreport.tables.sheet import Sheet
from perfreport.writers.excel import write_workbook
from perfreport.writers.xlsx import col_letter

UNIFIED_COLS = ["name", "time sum (µs)", "roofline mean (%)", "roofline median (%)", "count", "ok"]


def _sheets():
    rows = [
        ["=SUM(A1:A9)", 1234.5678, 61.7, 50.0, 3, True],
        [" padded ", 0.0, 100.0, 0.25, 12_345, False],
        ["odd \ufffe char", 262422.4, None, 12.5, 7, None],
        ["", 1e-7, 0.5, 99.9, 0, True],
    ]
    uni = Sheet("unified_perf_summary", UNIFIED_COLS, rows, {"time sum (µs)": "0.000", "count": "0"})
    other = Sheet("gpu_timeline", ["device", "time (µs)"], [[0, 45.644942626953124], [1, 2.5]], {"time (µs)": "0.000"})
    return [uni, other]


@pytest.fixture(scope="module")
def book(tmp_path_factory):
    out = tmp_path_factory.mktemp("x") / "r.xlsx"
    write_workbook(_sheets(), out, ["source: hand-made"])
    return out, load_workbook(out)


def test_col_letter_by_hand():
    assert [col_letter(i) for i in (0, 25, 26, 51, 52, 701, 702)] == ["A", "Z", "AA", "AZ", "BA", "ZZ", "AAA"]


def test_cells_read_back(book):
    _, wb = book
    ws = wb["unified_perf_summary"]
    head = [c.value for c in ws[1]]
    name, t, ok = head.index("name") + 1, head.index("time sum (µs)") + 1, head.index("ok") + 1
    assert ws.cell(2, name).value == "=SUM(A1:A9)" and ws.cell(2, name).data_type == "s"  # text, not a formula
    assert ws.cell(3, name).value == " padded "  # blanks kept
    assert ws.cell(4, name).value == "odd \\ufffe char"  # not an XML character: shown as its escape
    assert ws.cell(5, name).value is None  # an empty text is no cell
    assert ws.cell(2, t).value == 1234.5678 and ws.cell(2, t).number_format == "#,##0.000"
    assert ws.cell(3, t).value == 0  # 16 significant digits, as openpyxl wrote them: 0.0 reads back 0
    assert ws.cell(2, ok).value is True and ws.cell(3, ok).value is False and ws.cell(4, ok).value is None
    count = ws.cell(2, head.index("count") + 1)
    assert count.value == 3 and count.number_format == "#,##0"
    assert wb["gpu_timeline"].cell(2, 2).value == 45.64494262695312


def test_header_style_widths_and_height(book):
    _, wb = book
    ws = wb["unified_perf_summary"]
    h = ws.cell(1, 1)
    assert h.font.b and h.fill.fgColor.rgb == "FFDDEBF7" and h.alignment.wrap_text and h.alignment.vertical == "top"
    assert ws.row_dimensions[1].height == 30  # a header over 14 characters wraps onto two lines
    head = [c.value for c in ws[1]]
    widths = {head[i]: ws.column_dimensions[col_letter(i)].width for i in range(len(head))}
    assert widths["time sum (µs)"] >= len("262,422.400") + 1
    assert wb["notes"].column_dimensions["B"].width == 140


def test_frozen_filter_and_data_bars(book):
    _, wb = book
    ws = wb["unified_perf_summary"]
    assert ws.freeze_panes == "B2" and wb["notes"].freeze_panes == "A2"
    assert ws.auto_filter.ref == f"A1:{col_letter(len(UNIFIED_COLS) - 1)}5"
    head = [c.value for c in ws[1]]
    bars = {}
    for rng in ws.conditional_formatting:
        for r in rng.rules:
            bars[str(rng.sqref)] = r
    for col in ("roofline mean (%)", "roofline median (%)"):
        L = col_letter(head.index(col))
        rule = bars[f"{L}2:{L}5"]
        assert rule.type == "dataBar"
        assert [(v.type, float(v.val)) for v in rule.dataBar.cfvo] == [("num", 0.0), ("num", 100.0)]
        assert rule.dataBar.color.rgb == "FF5B9BD5"


def test_print_setup_fits_the_width(book):
    """Printed landscape, one page wide (any number tall), header row on every page (and the
    first column where it is frozen)."""
    _, wb = book
    for ws in wb.worksheets:
        ps = ws.page_setup
        assert ps.orientation == "landscape", ws.title
        assert ws.sheet_properties.pageSetUpPr.fitToPage, ws.title
        assert (int(ps.fitToWidth), int(ps.fitToHeight)) == (1, 0), ws.title
        assert ws.print_title_rows == "$1:$1", ws.title
        assert ws.print_title_cols == (None if ws.title == "notes" else "$A:$A"), ws.title


def test_sheet_order_and_same_bytes_each_time(book, tmp_path):
    out, wb = book
    assert wb.sheetnames == ["unified_perf_summary", "notes", "columns", "gpu_timeline"]
    again = tmp_path / "again.xlsx"
    write_workbook(_sheets(), again, ["source: hand-made"])
    assert again.read_bytes() == out.read_bytes()  # no timestamps in the package
    with zipfile.ZipFile(out) as z:
        assert z.testzip() is None
        assert z.namelist()[0] == "[Content_Types].xml"


def test_column_wise_cells_are_the_cell_by_cell_text():
    """xlsx._cells builds sheetData column by column; the text (and the shared-string numbering,
    in reading order) is what writing each cell in turn with _cell gives."""
    from perfreport.writers.xlsx import CHUNK_ROWS, SheetPart, Strings, Styles, _cell, _cells

    n = CHUNK_ROWS + 3  # two chunks
    cols = [
        [f"name {i % 7}" if i % 5 else "" for i in range(n)],  # text and empty text
        [i * 0.5 for i in range(n)],  # floats
        [i if i % 3 else None for i in range(n)],  # ints and no value
        [(True, 2.5, "b", None, (1, 2), 7)[i % 6] for i in range(n)],  # mixed
    ]
    header = ["t", "f", "i", "m"]
    sp = SheetPart("s", header, cols, n, [None, "0.000", "0", None], [10.0] * 4)
    got_strings, ref_strings = Strings(str), Strings(str)
    got = "".join(_cells(sp, got_strings, Styles()))
    styles = Styles()
    st = [f' s="{styles.style(f)}"' if f is not None else "" for f in sp.formats]
    head = "".join(f'<c r="{col_letter(i)}1" s="1" t="s"><v>{ref_strings(h)}</v></c>' for i, h in enumerate(header))
    ref = f'<row r="1">{head}</row>' + "".join(
        f'<row r="{r + 2}">'
        + "".join(_cell(col_letter(j), r + 2, st[j], cols[j][r], ref_strings) for j in range(4))
        + "</row>"
        for r in range(n)
    )
    assert got == ref
    assert got_strings.items == ref_strings.items
    assert '<c r="D2" t="b"><v>1</v></c>' in got and '<c r="D6" t="s">' in got  # a tuple is its text
