"""Serial, --jobs 2 and a local Ray instance give byte-identical merged sheets.

Four rank traces built from the shared H100 trace by scripts/make_rank_traces.py
(distributedInfo rank/world_size, per-rank kernel scaling, 8 all-reduce calls with Seq).
"""

from __future__ import annotations

import importlib.util

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


def test_jobs_2_is_byte_identical_to_serial(rank_dir, serial):
    par = analyze_ranks(str(rank_dir), jobs=2, engine="process")
    assert _texts(par) == _texts(serial)


@pytest.mark.skipif(
    importlib.util.find_spec("ray") is None,
    reason="ray is not installed (pip install 'perfreport[ray]'; make test installs it)",
)
def test_local_ray_is_byte_identical_to_serial(rank_dir, serial):
    # the engine starts a local instance with ray.init(num_cpus=2) and stops it after
    rep = analyze_ranks(str(rank_dir), jobs=2, engine="ray")
    assert _texts(rep) == _texts(serial)
