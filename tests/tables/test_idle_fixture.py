"""The idle split, launch delays and steps of a real CPU capture with a spliced GPU side
(``fixtures/idle_launch_steps.json.gz``, ``scripts/capture_idle_fixtures.py``), checked against a
second computation straight from the raw events and against what the capture was built to hold:
a 3 ms host stall per step, a storm of 20 tiny adds per step whose kernels are shorter than
their launches, and one kernel that waits 150 µs on a dependency."""

from __future__ import annotations

import gzip
import json

import pytest

from perfreport.pipeline import analyze
from tests.conftest import FIX

TRACE = FIX / "idle_launch_steps.json.gz"


@pytest.fixture(scope="module")
def report():
    return analyze(str(TRACE))


def _raw_split():
    """Host / GPU wait from the raw JSON, one gap at a time, with plain Python."""
    ev = json.load(gzip.open(TRACE))["traceEvents"]
    launch = {e["args"]["correlation"]: e["ts"] for e in ev if e.get("cat") == "cuda_runtime"}
    ks = sorted(
        (e["ts"], e["ts"] + e["dur"], launch.get(e["args"].get("correlation"))) for e in ev if e.get("cat") == "kernel"
    )
    host = gpu = 0.0
    run_end = ks[0][1]
    for i in range(1, len(ks)):
        s = ks[i][0]
        if s > run_end:  # a gap [run_end, s)
            queued_from = min(k[2] for k in ks[i:] if k[2] is not None)
            h = min(max(queued_from - run_end, 0.0), s - run_end)
            host += h
            gpu += (s - run_end) - h
        run_end = max(run_end, ks[i][1])
    return host, gpu


def test_idle_split_equals_a_computation_from_the_raw_events(report):
    row = [r for r in report.sheet("idle_time").records() if r["stream"] == "all"][0]
    host, gpu = _raw_split()
    assert row["host wait (µs)"] == pytest.approx(host, abs=1e-6)
    assert row["GPU wait (µs)"] == pytest.approx(gpu, abs=1e-6)
    assert row["unknown (µs)"] == 0  # every kernel has its launch in the trace


def test_the_capture_shows_what_it_was_built_to_hold(report):
    steps = report.sheet("steps").records()
    assert [s["step"] for s in steps] == [0, 1, 2] and {s["source"] for s in steps} == {"ProfilerStep"}
    for s in steps:
        assert s["host wait (µs)"] >= 3000  # the 3 ms stall, GPU idle with nothing queued
        assert s["verdict"] == "CPU-bound"
    launches = {r["op"]: r for r in report.sheet("launch_stats").records()}
    add = launches["aten::add"]
    assert add["launch calls"] == 60 and add["GPU work shorter than launch"] == 60  # the storms
    mul = launches["aten::mul"]
    assert mul["delay median (µs)"] == pytest.approx(150.0)  # the dependency wait
    assert launches["aten::mm"]["delay median (µs)"] == pytest.approx(5.0)  # the launch latency
    q = [r for r in report.sheet("launch_queue").records() if r["stream"] == 7][0]
    assert q["queued max"] >= 4  # four relus launched while the 3 ms mm runs
    first = report.sheet("fix_first").records()[0]
    assert first["kind"] == "host wait"
