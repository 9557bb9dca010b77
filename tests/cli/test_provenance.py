"""Issue 23: every output carries the tool version, command line and input SHA-256; --csv-dir
writes notes.csv; --format without --sheet; --basis achievable names what falls back to peak;
diff --format tsv; 'wrote' lines come after the summary."""

from __future__ import annotations

import csv
import hashlib
import json

import pytest
from openpyxl import load_workbook

from perfreport import __version__
from tests.cli.forked_cli import run as forked_run
from tests.conftest import FIX

TRACE = FIX / "h100_qwen_0.5b.json.gz"
SHA = hashlib.sha256(TRACE.read_bytes()).hexdigest()


# a real process: a child forked from the server that has imported the command line (tests/cli/forked_cli.py)
def run(*args):
    return forked_run(*args, text=True)


@pytest.fixture(scope="module")
def outputs(tmp_path_factory):
    d = tmp_path_factory.mktemp("prov")
    args = ("analyze", str(TRACE), "-o", str(d / "r.xlsx"), "--csv-dir", str(d / "csv"), "--html", str(d / "r.html"))
    r = run(*args, "--summary")
    assert r.returncode == 0, r.stderr
    return d, r


def test_every_output_carries_version_command_and_checksum(outputs):
    d, r = outputs
    wb = load_workbook(d / "r.xlsx", read_only=True)
    notes = {row[0]: row[1] for row in wb["notes"].iter_rows(min_row=2, values_only=True)}
    wb.close()
    assert notes["perfreport version"] == __version__ and notes["input SHA-256"] == SHA
    assert notes["command line"].startswith("perfreport analyze ") and "--csv-dir" in notes["command line"]
    with open(d / "csv" / "notes.csv", encoding="utf-8") as fh:
        rows = {a: b for a, b in list(csv.reader(fh))[1:]}
    assert rows["input SHA-256"] == SHA and rows["coverage"].startswith("coverage of ")
    assert "GPU spec" in rows and rows["perfreport version"] == __version__
    html = (d / "r.html").read_text(encoding="utf-8")
    assert SHA in html and f"perfreport version: {__version__}" in html


def test_wrote_lines_after_the_summary_and_count_notes_csv(outputs):
    _, r = outputs
    assert "top ops by GPU time" in r.stdout  # the summary (stdout) ...
    err = r.stderr.strip().splitlines()
    assert err[-3:] == [  # ... then the paths, last
        f"wrote {next(a for a in err if a.endswith('r.xlsx')).split(' ', 1)[1]}",
        f"wrote {next(a for a in err if a.endswith('r.html')).split(' ', 1)[1]}",
        err[-1],
    ]
    assert err[-1].startswith("wrote ") and "CSV files (one per sheet, and notes.csv)" in err[-1]


def test_json_sheet_and_whole_report_carry_provenance(tmp_path):
    r = run("analyze", str(TRACE), "--sheet", "gpu_timeline", "--format", "json", "-q")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["provenance"]["input SHA-256"] == SHA
    whole = run("analyze", str(TRACE), "--format", "json", "-q")  # no --sheet: the whole report
    assert whole.returncode == 0, whole.stderr
    doc = json.loads(whole.stdout)
    assert doc["provenance"]["input SHA-256"] == SHA and "unified_perf_summary" in doc["sheets"]
    assert not list(tmp_path.iterdir()) and not (FIX / "h100_qwen_0.5b_perf_report.xlsx").exists()
    # what analyze printed is what diff reads
    (tmp_path / "a.json").write_text(whole.stdout, encoding="utf-8")
    d = run("diff", str(tmp_path / "a.json"), str(tmp_path / "a.json"), "--sheet", "diff_ops", "--format", "tsv")
    assert d.returncode == 0, d.stderr
    head = d.stdout.splitlines()[0].split("\t")
    assert head[:3] == ["match", "status", "name"] and "\t" in d.stdout.splitlines()[1]


@pytest.mark.parametrize("fmt", ["csv", "tsv", "table"])
def test_format_without_sheet_is_a_usage_error_naming_the_fix(fmt):
    r = run("analyze", str(TRACE), "--format", fmt, "-q")
    assert r.returncode == 2 and r.stdout == ""
    assert f"--format {fmt} needs --sheet NAME" in r.stderr and "--csv-dir DIR" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


def test_basis_achievable_names_the_figures_that_stay_at_peak():
    from perfreport.pipeline import analyze

    rep = analyze(str(TRACE), arch="h100", basis="achievable")  # the H100 spec has no achievable figures
    w = [x for x in rep.warnings if x.startswith("--basis achievable")]
    assert w == [
        "--basis achievable: the NVIDIA H100 SXM5 80GB spec has no achievable figures at all; "
        "every figure stays at the datasheet peak"
    ]
    h200 = analyze(str(TRACE), arch="h200", basis="achievable")  # achievable bandwidth only
    w = [x for x in h200.warnings if x.startswith("--basis achievable")]
    assert len(w) == 1 and "matrix_bf16" in w[0] and "memory bandwidth" not in w[0]
    assert h200.spec.mem_bw_tbps == 4.47
    r = run("analyze", str(TRACE), "--arch", "h100", "--basis", "achievable", "--sheet", "gpu_timeline", "-q")
    assert r.returncode == 0 and "warning: --basis achievable" in r.stderr
