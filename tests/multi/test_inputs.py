"""Multi-rank inputs: directories, globs, ranks from distributedInfo / file name / position,
and the CLI block of `perfreport analyze` with several traces."""

from __future__ import annotations

import json

import pytest

from perfreport.errors import BadInput
from perfreport.multi import analyze_ranks
from perfreport.multi.inputs import assign_ranks, expand_inputs, is_multi, rank_from_name
from tests.cli.forked_cli import run

from rank_fragments import ROOT, write_fragments


def test_rank_from_file_name():
    assert rank_from_name("/x/trace_rank3.json.gz") == 3
    assert rank_from_name("RANK-12.pt.trace.json") == 12
    assert rank_from_name("host_1234.1700000000.pt.trace.json") is None


def test_assign_ranks_fills_gaps_and_rejects_duplicates():
    got = assign_ranks([("a", 1, "file name"), ("b", None, ""), ("c", None, "")])
    assert got == [
        ("a", 1, "file name"),
        ("b", 0, "position in the input list"),
        ("c", 2, "position in the input list"),
    ]
    with pytest.raises(BadInput, match="rank 1 is also the rank of a"):
        assign_ranks([("a", 1, "distributedInfo"), ("b", 1, "file name")])


def test_dir_glob_and_files(tmp_path):
    ps = write_fragments(tmp_path, 3)
    (tmp_path / "notes.txt").write_text("x")
    assert expand_inputs([str(tmp_path)]) == [str(p) for p in ps]
    assert expand_inputs([str(tmp_path / "rank*.json")]) == [str(p) for p in ps]
    assert expand_inputs([str(ps[1]), str(ps[0]), str(ps[1])]) == [str(ps[1]), str(ps[0])]
    assert is_multi([str(tmp_path)]) and is_multi([str(ps[0]), str(ps[1])])
    assert not is_multi([str(ps[0])]) and not is_multi(["-"])
    with pytest.raises(BadInput, match="no file matches"):
        expand_inputs([str(tmp_path / "none*.json")])


def test_rank_from_the_file_name_when_distributed_info_is_missing(tmp_path):
    write_fragments(tmp_path, 2, name="trace_rank{r}.json", with_rank=False)
    rep = analyze_ranks(str(tmp_path), jobs=1)
    assert [(r["rank"], r["rank from"]) for r in rep.sheet("ranks").records()] == [(0, "file name"), (1, "file name")]
    assert "rank from file name: 2" in rep.notes[0]


# a real process: a child forked from the server that has imported the command line (tests/cli/forked_cli.py)
def _cli(*args, cwd=ROOT):
    return run("analyze", *args, text=True, cwd=cwd, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})


def test_cli_merged_report_per_rank_reports_and_csv(tmp_path):
    d = tmp_path / "run"
    write_fragments(d, 2)
    r = _cli(d, "-j", "2", "--csv-dir", tmp_path / "csv", "--per-rank", tmp_path / "per", "-q")
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "run_merged_perf_report.xlsx").is_file()  # beside the directory
    assert sorted(p.name for p in (tmp_path / "per").iterdir()) == ["rank0_perf_report.xlsx", "rank1_perf_report.xlsx"]
    assert (tmp_path / "csv" / "collectives.csv").is_file()
    s = _cli(d / "rank0.json", d / "rank1.json", "--sheet", "collectives", "--format", "json", "--engine", "serial")
    assert s.returncode == 0, s.stderr
    rows = json.loads(s.stdout)["rows"]
    assert [row["seq"] for row in rows] == [1, 2, 3]


def test_cli_bad_inputs_are_one_line(tmp_path):
    write_fragments(tmp_path / "a", 1)
    write_fragments(tmp_path / "b", 1)
    r = _cli(tmp_path / "a" / "rank0.json", tmp_path / "b" / "rank0.json", "--sheet", "ranks")
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "rank 0 is also the rank of" in r.stderr
    bad = tmp_path / "c"
    bad.mkdir()
    (bad / "rank0.json").write_text("{\"traceEvents\": [")
    (bad / "rank1.json").write_text(json.dumps({"traceEvents": []}))
    r = _cli(bad, "--engine", "process", "-j", "2")
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "rank" in r.stderr
    r = _cli(tmp_path / "a", "--engine", "threads")
    assert r.returncode == 2 and "--engine" in r.stderr
