"""cli/multi.py: ``perfreport analyze`` with several traces: the merged workbook (by default beside
the directory), per-rank workbooks, a repeated input read once, bad options exit 2, and a trace
--keep-going leaves out makes the run exit 3 (written, but incomplete)."""

from __future__ import annotations

import openpyxl
import pytest
from typer.testing import CliRunner

from perfreport.cli.app import app
from tests.multi.rank_fragments import write_fragments


def _run(*args):
    return CliRunner().invoke(app, ["analyze", *map(str, args)])


@pytest.fixture
def run_dir(tmp_path):
    write_fragments(tmp_path / "run", 2)
    return tmp_path / "run"


def test_a_directory_gives_the_merged_workbook_beside_it_and_per_rank_ones(run_dir, tmp_path):
    r = _run(run_dir, "-q", "--engine", "serial", "--per-rank", tmp_path / "ranks")
    assert r.exit_code == 0, r.output
    merged = tmp_path / "run_merged_perf_report.xlsx"
    assert "ranks" in openpyxl.load_workbook(merged, read_only=True).sheetnames
    assert sorted(p.name for p in (tmp_path / "ranks").iterdir()) == [
        "rank0_perf_report.xlsx",
        "rank1_perf_report.xlsx",
    ]


def test_a_repeated_input_is_read_once_with_a_warning(run_dir, tmp_path):
    r0, r1 = sorted(run_dir.iterdir())
    r = _run(r0, r1, r0, "-q", "--engine", "serial", "-o", tmp_path / "m.xlsx")
    assert r.exit_code == 0, r.output
    assert f"{r0}: warning: given 2 times; read once, as one rank" in r.stderr


def test_bad_format_exits_2(run_dir):
    r = _run(run_dir, "-q", "--engine", "serial", "--sheet", "ranks", "--format", "yaml")
    assert r.exit_code == 2 and "--format: must be one of csv, tsv, json, table, not 'yaml'" in r.stderr


def test_keep_going_leaves_out_a_bad_trace_and_exits_3(run_dir, tmp_path):
    (run_dir / "rank9.json").write_text("{not a trace")
    r = _run(run_dir, "-q", "--engine", "serial", "--keep-going", "-o", tmp_path / "m.xlsx")
    assert r.exit_code == 3, r.output
    assert "left out:" in r.stderr and "rank9.json" in r.stderr
    assert (tmp_path / "m.xlsx").is_file()
    r = _run(run_dir, "-q", "--engine", "serial", "-o", tmp_path / "n.xlsx")
    assert r.exit_code == 2 and not (tmp_path / "n.xlsx").exists()  # without --keep-going: nothing written
