"""Serial, --jobs 2 and a local Ray instance give byte-identical merged sheets; the Ray run
(through the command line) prints none of Ray's lines under -q and leaves nothing under $TMPDIR.

Rank traces built from the shared H100 trace by scripts/make_rank_traces.py (distributedInfo
rank/world_size, per-rank kernel scaling, 8 all-reduce calls with Seq): four for the merged
report's figures, two for the engines (one trace a worker; each rank more cost a fresh worker
process, ~1.3 CPU s under Ray: 13 -> 10 CPU s for the Ray run).
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from perfreport.multi import analyze_ranks
from perfreport.writers.text import csv_text

from rank_fragments import ROOT, mrt

H100 = ROOT / "fixtures" / "h100_qwen_0.5b.json.gz"
RANKS = 4


@pytest.fixture(scope="module")
def rank_dir(tmp_path_factory):
    d = tmp_path_factory.mktemp("ranks")
    mrt.make_rank_traces(H100, d, RANKS, collectives=8)
    return d


@pytest.fixture(scope="module")
def serial(rank_dir):
    return analyze_ranks(str(rank_dir), jobs=1, engine="serial")


@pytest.fixture(scope="module")
def two_ranks(tmp_path_factory):
    """(folder of two rank traces, their serial report): what the engines must reproduce."""
    d = tmp_path_factory.mktemp("ranks2")
    mrt.make_rank_traces(H100, d, 2, collectives=8)
    return d, analyze_ranks(str(d), jobs=1, engine="serial")


def _texts(report) -> dict:
    return {s.name: csv_text(s) for s in report.sheets}


def test_serial_merged_report(serial):
    # the H100 fixture replicated per rank has ProfilerSteps: the collectives get a per-step view too
    assert serial.sheet_names == ["ranks", "ops_by_rank", "gpu_timeline_by_rank", "collectives", "stragglers_by_step"]
    ranks = serial.sheet("ranks").records()
    assert [r["rank"] for r in ranks] == list(range(RANKS))
    assert {r["rank from"] for r in ranks} == {"distributedInfo"}
    mm = next(
        r
        for r in serial.sheet("ops_by_rank").records()
        if r["name"] == "aten::mm" and r["input dims"] == "(8944, 1024), (1024, 2816)"
    )
    # rank r's kernels are 1 + 0.05 r times longer: the slowest rank is the last, and
    # max / min = 1.15 (each duration rounded to 1 ns by the generator)
    assert mm["slowest rank"] == RANKS - 1 and mm["ranks with it"] == RANKS
    assert mm["time max (µs)"] / mm["time min (µs)"] == pytest.approx(1.15, rel=1e-4)
    assert mm["time median (µs)"] == pytest.approx((mm["rank 1 (µs)"] + mm["rank 2 (µs)"]) / 2)
    calls = serial.sheet("collectives").records()
    assert len(calls) == 8 and all(c["ranks seen"] == RANKS for c in calls)
    assert [c["start skew (µs)"] for c in calls] == pytest.approx([(3 + i % 3) * 3 for i in range(8)], abs=2e-3)
    tl = serial.sheet("gpu_timeline_by_rank").records()
    assert sorted({r["rank"] for r in tl}) == list(range(RANKS))


def test_jobs_2_is_byte_identical_to_serial(two_ranks):
    d, serial = two_ranks
    par = analyze_ranks(str(d), jobs=2, engine="process")
    assert _texts(par) == _texts(serial)


@pytest.mark.skipif(
    importlib.util.find_spec("ray") is None,
    reason="ray is not installed (pip install 'perfreport[ray]'; make test installs it)",
)
def test_local_ray_cli_is_byte_identical_to_serial_quiet_and_leaves_nothing(two_ranks, tmp_path):
    """The suite's one Ray start: `analyze DIR --engine ray --jobs 2 -q` starts a local instance
    (ray.init(num_cpus=2), stopped after) and writes the serial CSVs byte for byte; none of Ray's
    INFO/WARNING lines (it prints both without -q); $TMPDIR is empty after (Ray alone leaves
    $TMPDIR/ray/session_*)."""
    rank_dir, serial = two_ranks
    tmp = Path(tempfile.mkdtemp(prefix="r", dir="/tmp"))  # short: Ray's socket paths must fit 107 bytes
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_")}
    env.update(TMPDIR=str(tmp), PYTHONPATH=str(ROOT))
    out = tmp_path / "csv"
    try:
        r = subprocess.run(
            [sys.executable, "-m", "perfreport", "analyze", str(rank_dir), "--engine", "ray", "--jobs", "2", "-q"]
            + ["-o", str(tmp_path / "r.xlsx"), "--csv-dir", str(out)],
            capture_output=True,
            text=True,
            env=env,
            cwd=tmp_path,
            timeout=300,
        )
        left = sorted(p.name for p in tmp.iterdir())
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    assert r.returncode == 0, r.stderr[-2000:]
    said = [ln for ln in (r.stdout + r.stderr).splitlines() if "INFO" in ln or "WARNING" in ln]
    assert said == [], r.stderr[-2000:]
    assert left == []
    # every sheet's CSV byte for byte; notes.csv is not a sheet (it holds the command line, which differs)
    got = {p.stem: p.read_text(encoding="utf-8") for p in out.glob("*.csv") if p.stem != "notes"}
    assert got == _texts(serial) and (out / "notes.csv").is_file()
