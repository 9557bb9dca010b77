"""diff/load.py: one side of a diff from a CSV dir, a report JSON, a sheet JSON or a workbook, each
within limits and with numbers checked; a trace is analysed."""

from __future__ import annotations

import csv
import gzip
import json

import pytest
from openpyxl import Workbook

from perfreport.diff.load import OPS_SHEET, TIMELINE_SHEET, checked_rows, load_side
from perfreport.errors import BadInput
from perfreport.tables import columns as C
from tests.kit import X, write_trace

ROW = {C.NAME: "aten::mm", C.INPUT_DIMS: "(4, 8)", C.COUNT: 2, C.TIME_SUM_US: 12.5}


def _csv(path, rows):
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)


def test_csv_dir_numbers_are_parsed(tmp_path):
    _csv(tmp_path / f"{OPS_SHEET}.csv", [ROW, {**ROW, C.COUNT: "", C.TIME_SUM_US: "1"}])
    _csv(tmp_path / f"{TIMELINE_SHEET}.csv", [{C.DEVICE: "0", C.TYPE: "idle", C.TIME_MS: "1.5"}])
    side = load_side(tmp_path)
    assert side.kind == "CSV dir"
    assert side.ops[0] == {C.NAME: "aten::mm", C.INPUT_DIMS: "(4, 8)", C.COUNT: 2, C.TIME_SUM_US: 12.5}
    assert side.ops[1][C.COUNT] is None and side.ops[1][C.TIME_SUM_US] == 1.0
    assert side.timeline == [{C.DEVICE: "0", C.TYPE: "idle", C.TIME_MS: 1.5}]


def test_csv_dir_refusals(tmp_path):
    with pytest.raises(BadInput, match=f"directory has no {OPS_SHEET}.csv"):
        load_side(tmp_path)
    _csv(tmp_path / f"{OPS_SHEET}.csv", [{**ROW, C.TIME_SUM_US: "fast"}])
    with pytest.raises(BadInput, match="holds 'fast', not a number"):
        load_side(tmp_path)


def test_report_json_gzipped_and_the_sheet_form(tmp_path):
    doc = {
        "source": "run.json",
        "notes": ["GPU spec: h100", "other"],
        "sheets": {OPS_SHEET: {"rows": [ROW]}, TIMELINE_SHEET: {"rows": []}},
    }
    p = tmp_path / "r.json.gz"
    p.write_bytes(gzip.compress(json.dumps(doc).encode()))
    side = load_side(p)
    assert (side.source, side.kind, side.ops, side.notes) == ("run.json", "report JSON", [ROW], ["GPU spec: h100"])
    s = tmp_path / "s.json"
    s.write_text(json.dumps({"sheet": OPS_SHEET, "notes": [], "rows": [ROW]}))
    assert load_side(s).ops == [ROW]
    s.write_text(json.dumps({"sheet": "kernel_summary", "rows": []}))
    with pytest.raises(BadInput, match=f"sheet JSON is 'kernel_summary', the diff needs {OPS_SHEET}"):
        load_side(s)


def test_workbook_side(tmp_path):
    wb = Workbook()
    ws = wb.active
    ws.title = OPS_SHEET
    ws.append(list(ROW))
    ws.append(list(ROW.values()))
    ws.append([None] * len(ROW))  # blank rows are skipped
    p = tmp_path / "r.xlsx"
    wb.save(p)
    side = load_side(p)
    assert side.kind == "workbook" and side.ops == [ROW] and side.timeline == []
    ws.title = "other"
    wb.save(p)
    with pytest.raises(BadInput, match=f"workbook has no {OPS_SHEET} sheet"):
        load_side(p)


def test_checked_rows_needs_a_finite_time():
    assert checked_rows([ROW], "p", OPS_SHEET) == [ROW]
    with pytest.raises(BadInput, match=f"{OPS_SHEET} row 1 has no 'time sum"):
        checked_rows([{C.NAME: "x"}], "p", OPS_SHEET)
    with pytest.raises(BadInput, match="row 2: 'time sum .* is nan, not a number"):
        checked_rows([ROW, {**ROW, C.TIME_SUM_US: float("nan")}], "p", OPS_SHEET)
    with pytest.raises(BadInput, match="'count' is True, not a number"):
        checked_rows([{**ROW, C.COUNT: True}], "p", OPS_SHEET)


def test_a_missing_path_and_a_trace(tmp_path):
    with pytest.raises(BadInput, match="no such file or directory"):
        load_side(tmp_path / "nothing.json")
    ev = [
        X("cpu_op", "aten::mm", 0, 10),
        X("cuda_runtime", "cudaLaunchKernel", 1, 1, correlation=1),
        X("kernel", "gemm", 20, 5, pid=0, tid=7, device=0, stream=7, correlation=1),
    ]
    side = load_side(write_trace(tmp_path, ev))
    assert side.kind == "trace"
    assert [(r[C.NAME], r[C.TIME_SUM_US]) for r in side.ops] == [("aten::mm", 5.0)]
    assert side.timeline
