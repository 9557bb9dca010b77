"""analyze --min-coverage (exit 3), --audit, coverage in --format json and the notes sheet."""

from __future__ import annotations

import json

import pytest
from openpyxl import load_workbook

from perfreport.pipeline import analyze
from tests.cli.forked_cli import run as forked_run
from tests.conftest import FIX

TRACE = FIX / "h100_qwen_0.5b.json.gz"


# a real process: a child forked from the server that has imported the command line (tests/cli/forked_cli.py)
def run(*args):
    return forked_run("analyze", TRACE, *args, text=True)


@pytest.fixture(scope="module")
def modelled_pct():
    return analyze(str(TRACE)).coverage.modelled_pct  # 65.3% on this trace


def test_min_coverage_gate(tmp_path, modelled_pct):
    assert 60 < modelled_pct < 70
    out = tmp_path / "r.xlsx"
    r = run("-o", str(out), "-q", "--min-coverage", "70")
    assert r.returncode == 3
    assert f"modelled {modelled_pct:.1f}% of the GPU time is below --min-coverage 70%" in r.stderr
    assert out.exists()  # the report is still written
    wb = load_workbook(out, read_only=True)
    notes = {row[0]: row[1] for row in wb["notes"].iter_rows(min_row=2, values_only=True)}
    assert notes["coverage"].startswith("coverage of ") and f"modelled {modelled_pct:.1f}%" in notes["coverage"]
    assert run("-o", str(out), "-q", "--min-coverage", "60").returncode == 0


def test_json_sheet_carries_coverage_and_flags(modelled_pct):
    r = run("--sheet", "unified_perf_summary", "--format", "json", "-q")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["coverage"]["modelled (%)"] == pytest.approx(modelled_pct)
    assert doc["coverage"]["total (µs)"] == pytest.approx(sum(x["time sum (µs)"] for x in doc["rows"]))
    assert {"flags", "coverage", "roofline % min", "roofline % max"} <= set(doc["rows"][0])


def test_audit_section(tmp_path):
    r = run("-o", str(tmp_path / "r.xlsx"), "-q", "--audit")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == "self-audit" and lines[1].startswith("coverage of ")
    assert any(line.startswith("flags: bimodal:") for line in lines)
