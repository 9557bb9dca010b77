"""Bad input: one line on stderr naming the file, exit code 2, never a traceback.

Each run is a real process: a child forked from a server that has imported the command line
(tests/cli/forked_cli.py), or a fresh interpreter (``real``) for a missing file and a file that
is not JSON."""

from __future__ import annotations

import json

import pytest

from tests.cli.forked_cli import run as forked_run
from tests.conftest import FIX


def run(*args, stdin: bytes | None = None, cwd=None, real=False):
    return forked_run(*args, input=stdin, cwd=cwd, real=real)


def _one_line(p, name):
    err = p.stderr.decode()
    assert "Traceback" not in err
    lines = [l for l in err.splitlines() if l.strip()]
    assert len(lines) == 1, err
    assert name in lines[0]
    return lines[0]


def _ev(**kw):
    e = {
        "ph": "X",
        "cat": "kernel",
        "name": "k",
        "pid": 0,
        "tid": 7,
        "ts": 1.0,
        "dur": 2.0,
        "args": {"device": 0, "stream": 7, "correlation": 1},
    }
    e.update(kw)
    return e


CASES = {
    "empty": (b"", "empty"),
    "not_json": (b"hello, this is not json", "not JSON"),
    "no_trace_events": (b'{"schemaVersion": 1, "deviceProperties": []}', "no traceEvents"),
    "top_level_array": (b"[1, 2, 3]", "traceEvents"),
    "truncated_json": (json.dumps({"traceEvents": [_ev(), _ev()]}).encode()[:-30], "truncated"),
    "missing_ts": (json.dumps({"traceEvents": [{k: v for k, v in _ev().items() if k != "ts"}]}).encode(), "ts"),
    "missing_dur": (json.dumps({"traceEvents": [{k: v for k, v in _ev().items() if k != "dur"}]}).encode(), "dur"),
    "missing_args": (json.dumps({"traceEvents": [{k: v for k, v in _ev().items() if k != "args"}]}).encode(), "args"),
    "negative_dur": (json.dumps({"traceEvents": [_ev(dur=-5.0)]}).encode(), "negative duration"),
    "bad_ts_type": (json.dumps({"traceEvents": [_ev(ts="yesterday")]}).encode(), "malformed"),
    "empty_events": (b'{"traceEvents": []}', "empty"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_bad_file(tmp_path, case):
    data, needle = CASES[case]
    p = tmp_path / f"{case}.json"
    p.write_bytes(data)
    r = run("analyze", str(p), "-q", real=case == "not_json")
    assert r.returncode == 2
    line = _one_line(r, str(p))
    assert needle.lower() in line.lower()
    assert not list(tmp_path.glob("*.xlsx")) and not list(tmp_path.glob(".*tmp"))


def test_missing_file(tmp_path):
    r = run("analyze", str(tmp_path / "nope.json"), real=True)
    assert r.returncode == 2
    assert "no such file" in _one_line(r, "nope.json")


def test_directory(tmp_path):
    r = run("analyze", str(tmp_path))
    assert r.returncode == 2
    assert "directory" in _one_line(r, str(tmp_path))


def test_truncated_gzip(tmp_path):
    data = (FIX / "mi210_gpu_only.json.gz").read_bytes()
    p = tmp_path / "cut.json.gz"
    p.write_bytes(data[: len(data) // 2])
    r = run("analyze", str(p), "-q")
    assert r.returncode == 2
    assert "gzip" in _one_line(r, str(p))


def test_corrupt_gzip(tmp_path):
    p = tmp_path / "bad.json.gz"
    p.write_bytes(b"\x1f\x8b" + b"\x00" * 100)
    r = run("analyze", str(p), "-q")
    assert r.returncode == 2
    _one_line(r, str(p))


def test_bad_stdin():
    r = run("analyze", "-", "-q", "--sheet", "gpu_timeline", stdin=b"{not json")
    assert r.returncode == 2
    _one_line(r, "<stdin>")


def test_unknown_arch(tmp_path):
    r = run("analyze", str(FIX / "mi210_gpu_only.json.gz"), "--arch", "Z9000", "--sheet", "gpu_timeline", "-q")
    assert r.returncode == 2
    _one_line(r, "Z9000")


def test_no_gpu_events_gives_cpu_sheets_and_exit_3(tmp_path):
    out = tmp_path / "cpu.xlsx"
    r = run("analyze", str(FIX / "cpu_block.json.gz"), "-o", str(out), "-q")
    assert r.returncode == 3
    line = _one_line(r, "cpu_block.json.gz")
    assert "no GPU events" in line
    from openpyxl import load_workbook

    wb = load_workbook(out, read_only=True)
    assert {"ops_summary", "ops_unique_args", "unified_perf_summary"} <= set(wb.sheetnames)


def test_refuses_to_overwrite_input(tmp_path):
    p = tmp_path / "t.json.gz"
    p.write_bytes((FIX / "mi210_gpu_only.json.gz").read_bytes())
    before = p.read_bytes()
    r = run("analyze", str(p), "-o", str(p), "-q")
    assert r.returncode == 2
    _one_line(r, str(p))
    assert p.read_bytes() == before
