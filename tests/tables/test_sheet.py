"""tables/sheet.py: the Sheet record, ranking with percent and cumulative percent, shape and list text."""

from __future__ import annotations

import pytest

from perfreport.tables import columns as C
from perfreport.tables.sheet import Sheet, fmt_dims, fmt_list, rank


def test_from_records_and_back():
    s = Sheet.from_records("s", [{"a": 1, "b": 2}, {"a": 3}], ["b", "a"], {"a": "0.0"}, ["note"])
    assert (s.columns, s.rows, s.formats, s.notes) == (["b", "a"], [[2, 1], [None, 3]], {"a": "0.0"}, ["note"])
    assert s.records() == [{"b": 2, "a": 1}, {"b": None, "a": 3}]


def test_to_pandas():
    pytest.importorskip("pandas")
    df = Sheet("s", ["x", "y"], [[1, "a"], [2, "b"]]).to_pandas()
    assert list(df.columns) == ["x", "y"] and df["x"].tolist() == [1, 2]


def test_rank_sorts_and_adds_percent_and_cumulative():
    recs = [{"t": 10.0, "n": "b"}, {"t": 30.0, "n": "a"}, {"t": None, "n": "c"}, {"t": 10.0, "n": "d"}]
    out = rank(recs, "t", 50.0)
    assert [r["n"] for r in out] == ["a", "b", "d", "c"]  # stable for the two 10s
    assert [r[C.PERCENT_PCT] for r in out] == [60.0, 20.0, 20.0, 0.0]
    assert [r[C.CUMULATIVE_PERCENT_PCT] for r in out] == [60.0, 80.0, 100.0, 100.0]
    assert rank([{"t": 1.0}], "t", 0.0)[0][C.PERCENT_PCT] == 0.0


def test_fmt_dims():
    assert fmt_dims([[16, 559], [], [1024]]) == "(16, 559), (), (1024)"
    assert fmt_dims([[[2, 3], [4]], [5]]) == "[(2, 3), (4)], (5)"  # a TensorList, then a tensor
    assert fmt_dims([7, "x"]) == "7, x"
    assert fmt_dims(None) == ""


def test_fmt_list():
    assert fmt_list(["float", None, "c10::BFloat16"]) == "float, , c10::BFloat16"
    assert fmt_list(["", None]) == "" and fmt_list(None) == ""
