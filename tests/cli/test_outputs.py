"""Outputs: workbook layout, CSV dir, one sheet on stdout, atomic writes, quiet pipes."""

from __future__ import annotations

import csv
import io
import json
import shutil

import pytest
from openpyxl import load_workbook

from tests.cli.forked_cli import run as forked_run
from tests.conftest import FIX

TRACE = FIX / "h100_qwen_0.5b.json.gz"


# a real process: a child forked from the server that has imported the command line (tests/cli/forked_cli.py)
def run(*args, cwd=None, stdin=None):
    return forked_run(*args, cwd=cwd, input=stdin)


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    d = tmp_path_factory.mktemp("rep")
    trace = d / "trace.json.gz"
    shutil.copy(TRACE, trace)
    r = run("analyze", str(trace), "--csv-dir", str(d / "csv"))
    assert r.returncode == 0, r.stderr.decode()
    return d, r


def test_default_workbook_beside_input_and_quiet_stdout(report):
    d, r = report
    assert (d / "trace_perf_report.xlsx").exists()
    assert r.stdout == b""  # stdout is a pipe: no decoration
    assert not [p for p in d.iterdir() if p.name.startswith(".")]  # no temp files left


def test_workbook_is_made_for_reading(report):
    d, _ = report
    wb = load_workbook(d / "trace_perf_report.xlsx")
    for name in (
        "gpu_timeline",
        "ops_summary",
        "ops_unique_args",
        "kernel_summary",
        "short_kernels",
        "ops_summary_by_category",
        "unified_perf_summary",
    ):
        ws = wb[name]
        assert ws.freeze_panes == "B2", name  # header row and first column
        assert ws.auto_filter.ref and ws.auto_filter.ref.startswith("A1:"), name
        assert ws.column_dimensions["A"].width >= 8
    ws = wb["ops_summary"]
    header = [c.value for c in ws[1]]
    assert "direct kernel time (µs)" in header
    col = header.index("direct kernel time (µs)") + 1
    v = ws.cell(row=2, column=col)
    assert isinstance(v.value, float) and v.number_format == "#,##0.000"
    for ws in wb.worksheets:
        for row in ws.iter_rows(values_only=True):
            for x in row:
                assert not (isinstance(x, str) and ("np.float64" in x or "np.int64" in x))


def test_csv_dir_has_every_sheet(report):
    d, _ = report
    names = {p.stem for p in (d / "csv").glob("*.csv")}
    assert {
        "gpu_timeline",
        "ops_summary",
        "ops_unique_args",
        "kernel_summary",
        "short_kernels",
        "ops_summary_by_category",
        "unified_perf_summary",
    } <= names
    rows = list(csv.DictReader(open(d / "csv" / "ops_summary.csv", encoding="utf-8")))
    mul = next(r for r in rows if r["name"] == "aten::mul")
    assert float(mul["direct kernel time (µs)"]) == pytest.approx(6752.9, abs=0.01)


def test_sheet_to_stdout_csv_and_json(tmp_path):
    r = run("analyze", str(TRACE), "--sheet", "gpu_timeline", "--format", "csv", cwd=tmp_path)
    assert r.returncode == 0, r.stderr.decode()
    rows = list(csv.DictReader(io.StringIO(r.stdout.decode())))
    assert [x["type"] for x in rows][:4] == ["computation", "exposed comm", "exposed memcpy", "idle"]
    assert not list(tmp_path.glob("*.xlsx"))  # --sheet without -o writes no workbook
    r = run("analyze", str(TRACE), "--sheet", "ops_summary", "--format", "json", "-q")
    doc = json.loads(r.stdout)
    assert doc["sheet"] == "ops_summary" and doc["rows"][0]["name"]


def test_stdin_pipeline():
    r = run("analyze", "-", "--sheet", "ops_summary_by_category", "-q", stdin=TRACE.read_bytes())
    assert r.returncode == 0, r.stderr.decode()
    assert r.stdout.decode().startswith("category,")
    assert r.stderr == b""


def test_unknown_sheet_is_bad_input():
    r = run("analyze", str(TRACE), "--sheet", "nope", "-q")
    assert r.returncode == 2
    assert "no sheet 'nope'" in r.stderr.decode()


def test_output_replaced_atomically(tmp_path):
    out = tmp_path / "r.xlsx"
    out.write_bytes(b"old")
    r = run("analyze", str(FIX / "mi210_gpu_only.json.gz"), "-o", str(out), "-q")
    assert r.returncode == 0, r.stderr.decode()
    assert out.read_bytes()[:2] == b"PK"
    assert [p.name for p in tmp_path.iterdir()] == ["r.xlsx"]


def test_summary_forced_in_a_pipe_and_file_mode(tmp_path):
    out = tmp_path / "r.xlsx"
    r = run("analyze", str(TRACE), "-o", str(out), "--summary")
    assert r.returncode == 0, r.stderr.decode()
    text = r.stdout.decode()
    assert "GPU timeline" in text and "unified_perf_summary" in text and "aten::mm" in text
    import os
    import stat

    mode = stat.S_IMODE(os.stat(out).st_mode)
    assert mode & 0o044  # readable by others, like any file the user writes


def test_notes_sheet_names_source_spec_and_rank(tmp_path):
    out = tmp_path / "r.xlsx"
    r = run("analyze", str(FIX / "vllm_decode_graph.json.gz"), "-o", str(out), "-q")
    assert r.returncode == 0, r.stderr.decode()
    notes = [": ".join(map(str, row)) for row in load_workbook(out)["notes"].iter_rows(values_only=True)]
    text = "\n".join(notes)
    assert "vllm_decode_graph.json.gz" in text
    assert "AMD Instinct MI300X" in text  # spec detected although the name is empty
    assert "rank 0 of 1" in text
