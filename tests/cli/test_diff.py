"""cli/diff.py: ``perfreport diff A B`` on two traces built here: --sheet on stdout, the outputs
written together, and the exit codes (0; 1 slower than --fail-if-slower, one line per row; 2 bad
option or sheet)."""

from __future__ import annotations

import csv
import io
import json

from typer.testing import CliRunner

from perfreport.cli.app import app
from perfreport.tables import columns as C
from tests.kit import X, shape_args, write_trace


def _trace(tmp_path, name, gemm_us):
    ev = [
        X("cpu_op", "aten::mm", 10, 50, **shape_args([[64, 64], [64, 64]], ["float", "float"])),
        X("cuda_runtime", "cudaLaunchKernel", 12, 2, correlation=1),
        X("kernel", "gemm", 100, gemm_us, pid=0, tid=7, device=0, stream=7, correlation=1),
    ]
    return write_trace(tmp_path, ev, name=name)


def _run(*args):
    return CliRunner().invoke(app, ["diff", *map(str, args)])


def test_slower_than_the_gate_exits_1_naming_each_regression(tmp_path):
    a, b = _trace(tmp_path, "a.json", 20), _trace(tmp_path, "b.json", 30)
    r = _run(a, b, "--arch-a", "h100_sxm", "--arch-b", "h100_sxm", "-q", "--fail-if-slower", "10")
    assert r.exit_code == 1, r.output
    lines = r.stderr.splitlines()
    assert "perfreport: slower by more than 10%: total GPU kernel time 20.0 -> 30.0 µs (+50.0%)" in lines
    assert any(
        x.startswith("perfreport: slower by more than 10%: aten::mm [") and "(+50.0%, name+shapes+dtypes)" in x
        for x in lines
    )
    assert _run(a, b, "-q", "--fail-if-slower", "60").exit_code == 0


def test_sheet_on_stdout_and_outputs_written(tmp_path):
    a, b = _trace(tmp_path, "a.json", 20), _trace(tmp_path, "b.json", 10)
    r = _run(a, b, "--sheet", "diff_ops", "--format", "csv", "-o", tmp_path / "d.xlsx", "--json", tmp_path / "d.json")
    assert r.exit_code == 0, r.output
    (row,) = list(csv.DictReader(io.StringIO(r.stdout)))
    assert (row[C.NAME], row[C.STATUS], float(row[C.DELTA_US])) == ("aten::mm", "faster", -10.0)
    assert (tmp_path / "d.xlsx").stat().st_size > 0
    assert "diff_ops" in json.loads((tmp_path / "d.json").read_text())["sheets"]


def test_bad_options_exit_2(tmp_path):
    a, b = _trace(tmp_path, "a.json", 20), _trace(tmp_path, "b.json", 10)
    r = _run(a, b, "--format", "yaml")
    assert (
        r.exit_code == 2 and r.stderr.strip() == "perfreport: --format must be one of csv, tsv, json, table, not 'yaml'"
    )
    r = _run(a, b, "--sheet", "no_such_sheet", "-q")
    assert r.exit_code == 2 and "perfreport: --sheet:" in r.stderr
    r = _run(a, tmp_path / "missing.json", "-q")
    assert r.exit_code == 2 and "missing.json" in r.stderr
