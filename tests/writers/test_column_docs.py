"""writers/column_docs.py: every column's unit, meaning and source for the workbook's columns sheet."""

from __future__ import annotations

from perfreport.tables import columns as C
from perfreport.tables.sheet import Sheet
from perfreport.writers.column_docs import DOCS, columns_rows, describe


def test_describe_by_name_then_by_prefix():
    unit, meaning, source = describe(C.TIME_SUM_US)
    assert (unit, meaning, source) == (
        C.SCHEMA[C.TIME_SUM_US].unit,
        C.SCHEMA[C.TIME_SUM_US].meaning,
        C.SCHEMA[C.TIME_SUM_US].source,
    )
    assert unit == "µs" and meaning
    assert describe(C.param("M")) == describe(C.param("anything"))
    assert describe(C.param("M")) is not None
    assert describe("a column nobody defined") is None
    assert all(len(v) == 3 for v in DOCS.values())


def test_columns_rows_name_the_sheets_and_fall_back_on_units():
    sheets = [
        Sheet("ops", [C.NAME, C.TIME_SUM_US, C.param("M"), "mystery (ms)"], []),
        Sheet("kernels", [C.NAME, C.param("N"), "odd"], []),
    ]
    rows = {r[0]: r for r in columns_rows(sheets)}
    assert list(rows) == [C.NAME, C.TIME_SUM_US, "param: *", "mystery (ms)", "odd"]
    assert rows[C.NAME][4] == "ops, kernels"
    assert rows["param: *"][4] == "ops, kernels"
    assert rows["mystery (ms)"][1:4] == ["ms", "(no definition yet)", ""]
    assert rows["odd"][1:4] == ["", "(no definition yet)", ""]
    assert rows[C.TIME_SUM_US][1:4] == list(describe(C.TIME_SUM_US))
