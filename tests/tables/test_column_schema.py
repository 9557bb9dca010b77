"""tables/column_schema.py: the Column record, the Excel number formats and the registry the
definitions in perfreport/tables/columns.py fill (the columns themselves: tests/tables/test_columns.py)."""

from __future__ import annotations

import pytest

from perfreport.tables import column_schema as S
from perfreport.tables import columns as C


def test_every_column_has_a_unit_field_and_a_known_format():
    for c in C.SCHEMA.values():
        assert c.fmt in (None, C.US, C.PCT, C.INT, "0.000000", "0.0"), c
        assert c.meaning, c.name
        if c.name.endswith("(µs)"):
            assert (c.unit, c.fmt) == ("µs", C.US), c.name
        if c.name.endswith("(%)"):
            assert (c.unit, c.fmt) == ("%", C.PCT), c.name


def test_a_column_cannot_be_defined_twice():
    with pytest.raises(ValueError, match="defined twice"):
        C._col(C.TIME_SUM_US, "µs", "again", "here")


def test_formats_of_columns():
    assert C.formats([C.COUNT, C.NAME, C.TIME_SUM_US, "x"]) == {C.COUNT: C.INT, C.TIME_SUM_US: C.US}


def test_a_new_column_registers_once(monkeypatch):
    monkeypatch.setattr(S, "SCHEMA", {})
    assert S._col("widgets (µs)", "µs", "widgets per call", "tables/x.py", fmt=S.US) == "widgets (µs)"
    assert S.SCHEMA["widgets (µs)"] == S.Column("widgets (µs)", "µs", "widgets per call", "tables/x.py", "0.000")
    assert S.formats(["widgets (µs)", "other"]) == {"widgets (µs)": "0.000"}
    with pytest.raises(ValueError, match="column 'widgets \\(µs\\)' defined twice"):
        S._col("widgets (µs)", "µs", "again", "here")
