"""Workbook: unified_perf_summary first and leading with what matters, notes second, a columns
sheet, frozen header row and first column, autofilter, data bar on roofline %, and number
formats that fit their columns (read back with openpyxl: no cell would show ###)."""

from __future__ import annotations

import re

import pytest
from openpyxl import load_workbook

from perfreport.writers.column_docs import columns_rows
from tests.conftest import FIX
from tests.kit.cached import analyzed

FIXTURES = [
    "h100_qwen_0.5b.json.gz",
    "vllm_decode_graph.json.gz",
    "inference_aiter_paged_attention_v1.json.gz",
    "cpu_block.json.gz",
    "mi300_qwen_0.5b.json.gz",
    "serving_moe.json.gz",
    "sglang_decode.json.gz",
]


@pytest.fixture(scope="module")
def book(tmp_path_factory):
    out = tmp_path_factory.mktemp("wb") / "r.xlsx"
    rep = analyzed(FIX / "h100_qwen_0.5b.json.gz")
    rep.to_excel(out)
    return rep, load_workbook(out)


def shown(v, fmt: str) -> str:
    """What Excel displays for number ``v`` under ``fmt``, for the formats the writer uses:
    ``0``, ``0.00``, ``#,##0``, ``#,##0.000`` (thousands separator, fixed decimals)."""
    m = re.fullmatch(r"(#,##)?0(?:\.(0+))?", fmt)
    assert m, f"unexpected number format {fmt!r}"
    nd = len(m.group(2) or "")
    text = f"{abs(v):.{nd}f}"
    if m.group(1):
        whole, _, frac = text.partition(".")
        groups = []
        while len(whole) > 3:
            groups.insert(0, whole[-3:])
            whole = whole[:-3]
        text = ",".join([whole] + groups) + ("." + frac if frac else "")
    return ("-" if v < 0 and float(text.replace(",", "")) != 0 else "") + text


def test_shown_by_hand():
    assert shown(262422.4, "#,##0.000000") == "262,422.400000"  # the GEMM GFLOP that showed ###
    assert shown(4055.251, "#,##0.000") == "4,055.251"
    assert shown(61.72083, "0.00") == "61.72"
    assert shown(-1234.5, "#,##0") == "-1,234"  # Python rounds half to even, as the writer's sizing


def test_sheet_order(book):
    _, wb = book
    assert wb.sheetnames[0] == "unified_perf_summary"
    assert "notes" in wb.sheetnames[:2]
    assert "columns" in wb.sheetnames


def test_unified_leads_with_what_matters(book):
    _, wb = book
    head = [c.value for c in wb["unified_perf_summary"][1]]
    want = ["name", "category", "time sum (µs)", "percent (%)", "roofline mean (%)", "bound"]
    if "flags" in head:
        want.append("flags")
    assert head[: len(want)] == want


def test_frozen_filtered_and_data_bar(book):
    _, wb = book
    for ws in wb.worksheets:
        if ws.title == "notes":
            assert ws.freeze_panes == "A2"
            continue
        assert ws.freeze_panes == "B2", ws.title  # header row and first column
        assert ws.auto_filter.ref == f"A1:{ws.cell(1, ws.max_column).column_letter}{ws.max_row}", ws.title
    ws = wb["unified_perf_summary"]
    col = [c.value for c in ws[1]].index("roofline mean (%)") + 1
    letter = ws.cell(1, col).column_letter
    rules = [(str(rng.sqref), r.type) for rng in ws.conditional_formatting for r in rng.rules]
    assert (f"{letter}2:{letter}{ws.max_row}", "dataBar") in rules


@pytest.mark.parametrize("name", FIXTURES[:3])
def test_no_number_overflows_its_column(tmp_path, name):
    out = tmp_path / "r.xlsx"
    analyzed(FIX / name).to_excel(out)
    wb = load_workbook(out)
    checked = 0
    for ws in wb.worksheets:
        widths = {k: d.width for k, d in ws.column_dimensions.items()}
        for row in ws.iter_rows(min_row=2):
            for c in row:
                if isinstance(c.value, (int, float)) and not isinstance(c.value, bool):
                    assert c.number_format != "General", (ws.title, c.coordinate)
                    text = shown(c.value, c.number_format)
                    w = widths.get(c.column_letter)
                    assert w is not None and len(text) + 1 <= w, (ws.title, c.coordinate, text, w)
                    checked += 1
    assert checked > 100


def test_gflop_of_gemm_rows_fits(book):
    _, wb = book
    ws = wb["GEMM"]
    head = [c.value for c in ws[1]]
    col = head.index("GFLOP") + 1
    letter = ws.cell(1, col).column_letter
    big = max(ws.cell(r, col).value or 0 for r in range(2, ws.max_row + 1))
    assert big > 10  # a real GEMM: 51.58 GFLOP
    assert len(shown(big, ws.cell(2, col).number_format)) + 1 <= ws.column_dimensions[letter].width


def test_columns_sheet_defines_every_column(book):
    _, wb = book
    defs = {r[0]: r for r in wb["columns"].iter_rows(min_row=2, values_only=True)}
    assert [c.value for c in wb["columns"][1]] == ["column", "unit", "formula / meaning", "source", "sheets"]
    for ws in wb.worksheets:
        if ws.title in ("notes", "columns"):
            continue
        for c in ws[1]:
            key = "param: *" if c.value.startswith("param: ") else c.value
            assert key in defs, (ws.title, c.value)
            assert defs[key][2] and defs[key][2] != "(no definition yet)", c.value
    assert defs["time sum (µs)"][1] == "µs"
    assert "max(FLOP / peak" in defs["roofline time (µs)"][2]


@pytest.mark.parametrize("name", FIXTURES)
def test_every_fixture_column_has_a_definition(name):
    rep = analyzed(FIX / name)
    missing = [r[0] for r in columns_rows(rep.sheets) if r[2] == "(no definition yet)"]
    assert not missing, f"add these to perfreport/tables/columns.py: {missing}"


def test_notes_sheet_has_spec_facts_and_coverage(book):
    rep, wb = book
    rows = {r[0]: r[1] for r in wb["notes"].iter_rows(min_row=2, values_only=True)}
    assert rows["GPU spec"].startswith("NVIDIA H100 SXM5 80GB")
    assert rows["memory bandwidth"] == "3.35 TB/s (10^12 B/s)"
    assert rows["peak matrix_bf16"] == "989.4 TFLOP/s (dense)"
    assert rows["deviceProperties"] == "1 device(s): NVIDIA H100 80GB HBM3"
    from perfreport.writers.summary import coverage_lines

    cov = coverage_lines(rep)  # report.coverage.lines(): the one coverage statement
    assert cov and rows["coverage"] == cov[0]  # the headline
    assert [r[1] for r in wb["notes"].iter_rows(min_row=2, values_only=True) if r[0] == "coverage detail"] == cov[1:]
    for line in cov:  # each once
        assert sum(1 for r in wb["notes"].iter_rows(values_only=True) if line in (r[1], f"{r[0]}: {r[1]}")) == 1
