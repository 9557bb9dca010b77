"""cli/analyze.py: ``perfreport analyze`` on traces built here: the outputs it writes, --sheet on
stdout, and its exit codes (0; 2 bad input or option with one line; 3 no GPU events or coverage
below --min-coverage)."""

from __future__ import annotations

import csv
import io
import json

import pytest
from typer.testing import CliRunner

from perfreport.cli.app import app
from perfreport.tables import columns as C
from tests.kit import X, shape_args, write_trace

EV = [
    X("cpu_op", "aten::mm", 10, 50, **shape_args([[64, 64], [64, 64]], ["float", "float"])),
    X("cuda_runtime", "cudaLaunchKernel", 12, 2, correlation=1),
    X("kernel", "gemm", 100, 20, pid=0, tid=7, device=0, stream=7, correlation=1),
]


def _run(*args):
    return CliRunner().invoke(app, ["analyze", *map(str, args)])


def test_workbook_and_csvs_are_written(tmp_path):
    t = write_trace(tmp_path, EV)
    r = _run(t, "--arch", "h100_sxm", "-q", "-o", tmp_path / "r.xlsx", "--csv-dir", tmp_path / "c")
    assert r.exit_code == 0, r.output
    assert (tmp_path / "r.xlsx").stat().st_size > 0
    assert (tmp_path / "c" / "unified_perf_summary.csv").is_file()


def test_sheet_as_json(tmp_path):
    r = _run(write_trace(tmp_path, EV), "--arch", "h100_sxm", "--sheet", "unified_perf_summary", "--format", "json")
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert doc["sheet"] == "unified_perf_summary" and [row[C.NAME] for row in doc["rows"]] == ["aten::mm"]


def test_the_default_workbook_goes_beside_the_trace(tmp_path):
    t = write_trace(tmp_path, EV, name="run.json")
    assert _run(t, "--arch", "h100_sxm", "-q").exit_code == 0
    assert (tmp_path / "run_perf_report.xlsx").is_file()


def test_sheet_on_stdout_writes_no_workbook(tmp_path):
    t = write_trace(tmp_path, EV, name="s.json")
    r = _run(t, "--arch", "h100_sxm", "--sheet", "ops_summary", "--format", "csv")
    assert r.exit_code == 0, r.output
    rows = list(csv.DictReader(io.StringIO(r.stdout)))
    assert [row[C.NAME] for row in rows] == ["aten::mm"]
    assert not (tmp_path / "s_perf_report.xlsx").exists()


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (["--format", "yaml"], "--format must be one of"),
        (["--basis", "typical"], "--basis must be peak or achievable, not 'typical'"),
        (["--with-html", "--sheet", "ops_summary"], "--with-html needs a workbook"),
    ],
)
def test_bad_options_exit_2_with_one_line(tmp_path, args, line):
    r = _run(write_trace(tmp_path, EV), "-q", *args)
    assert r.exit_code == 2
    err = [x for x in r.stderr.splitlines() if x]
    assert len(err) == 1 and line in err[0] and err[0].startswith("perfreport: ")


def test_a_missing_trace_exits_2(tmp_path):
    r = _run(tmp_path / "nothing.json", "-q")
    assert r.exit_code == 2 and "no such file" in r.stderr


def test_no_gpu_events_and_low_coverage_exit_3(tmp_path):
    cpu_only = write_trace(tmp_path, [X("cpu_op", "aten::mm", 0, 5)], name="cpu.json")
    r = _run(cpu_only, "-q", "-o", tmp_path / "cpu.xlsx")
    assert r.exit_code == 3 and "warning: trace has no GPU events" in r.stderr
    assert (tmp_path / "cpu.xlsx").is_file()  # written, but incomplete
    unmodelled = [
        X("cpu_op", "my::op", 0, 50),
        X("cuda_runtime", "cudaLaunchKernel", 1, 1, correlation=1),
        X("kernel", "mystery", 100, 20, pid=0, tid=7, device=0, stream=7, correlation=1),
    ]
    r = _run(write_trace(tmp_path, unmodelled, name="u.json"), "--arch", "h100_sxm", "-q", "--min-coverage", "50")
    assert r.exit_code == 3 and "below --min-coverage 50%" in r.stderr
