"""The time axis's data (perfreport/tables/lanes.py): lanes, idle rows and step markers checked
against the raw events of a real capture (fixtures/idle_launch_steps.json.gz), the downsampling
rule by hand and its bound on a synthetic storm, the payload cap."""

from __future__ import annotations

import gzip
import json

import numpy as np
import pytest

import perfreport
from perfreport.pipeline import load_tree
from perfreport.tables.gpu_arrays import gpu_arrays
from perfreport.tables.lanes import RESOLUTIONS, merge_blocks, timeline_lanes
from perfreport.tables.steps import steps_sheet
from perfreport.tree.steps import find_steps
from tests.conftest import FIX

TRACE = FIX / "idle_launch_steps.json.gz"
# what each kernel of the capture is (scripts/capture_idle_fixtures.py: one op per kernel)
CATEGORY = {"add_kernel": "BinaryElementwise", "mul_kernel": "BinaryElementwise", "mm_kernel": "GEMM"}
CATEGORY["relu_kernel"] = "UnaryElementwise"
OP = {"add_kernel": "aten::add", "mul_kernel": "aten::mul", "mm_kernel": "aten::mm", "relu_kernel": "aten::relu"}


@pytest.fixture(scope="module")
def report():
    return perfreport.analyze(str(TRACE))


@pytest.fixture(scope="module")
def raw():
    return json.load(gzip.open(TRACE))["traceEvents"]


def test_lanes_are_the_kernels_of_the_raw_events(report, raw):
    tl = report.timeline
    steps = sorted(
        (e["ts"], e["ts"] + e["dur"], int(e["name"][13:])) for e in raw if e["name"].startswith("ProfilerStep#")
    )
    launch = {e["args"]["correlation"]: e["ts"] for e in raw if e.get("cat") == "cuda_runtime"}
    t0 = min([e["ts"] for e in raw if e.get("cat") == "kernel"] + [s[0] for s in steps])
    assert tl["t0"] == t0 and not tl["merged"] and tl["dropped"] == []
    by_stream: dict = {}
    for e in raw:
        if e.get("cat") == "kernel":
            by_stream.setdefault(e["args"]["stream"], []).append(e)
    assert [(lane["device"], lane["stream"]) for lane in tl["lanes"]] == [("0", "7"), ("0", "8")]
    for lane in tl["lanes"]:
        ks = sorted(by_stream[int(lane["stream"])], key=lambda e: e["ts"])
        assert lane["events"] == len(ks) == len(lane["s"])
        assert [t0 + s for s in lane["s"]] == [e["ts"] for e in ks]  # exact: relative starts lose nothing
        assert lane["d"] == [e["dur"] for e in ks]
        assert [tl["names"][k] for k in lane["k"]] == [e["name"] for e in ks]
        assert [tl["cats"][c] for c in lane["c"]] == [CATEGORY[e["name"]] for e in ks]
        assert [tl["ops"][o] for o in lane["o"]] == [OP[e["name"]] for e in ks]
        # a kernel's step: the ProfilerStep whose CPU range holds its launch call
        want = [
            next((i for i, (a, b, _) in enumerate(steps) if a <= launch[e["args"]["correlation"]] < b), -1) for e in ks
        ]
        assert lane["t"] == want
    assert sum(len(lane["s"]) for lane in tl["lanes"]) == 76 == tl["blocks"] == tl["events"]


def test_idle_rows_are_the_idle_split(report):
    (idle,) = report.timeline["idle"]
    row = next(r for r in report.sheet("idle_time").records() if r["stream"] == "all")
    got = {k: sum(d for d, kind in zip(idle["d"], idle["kind"]) if kind == i) for i, k in enumerate(["h", "g", "u"])}
    assert got["h"] == pytest.approx(row["host wait (µs)"], abs=1e-6)
    assert got["g"] == pytest.approx(row["GPU wait (µs)"], abs=1e-6)
    assert got["u"] == row["unknown (µs)"] == 0
    assert idle["s"] == sorted(idle["s"])
    assert got["h"] >= 3 * 3000  # the three 3 ms host stalls show as host-wait idle


def test_step_markers_at_the_step_windows(report, raw):
    tl = report.timeline
    ks = [e for e in raw if e.get("cat") == "kernel"]
    launch = {e["args"]["correlation"]: e["ts"] for e in raw if e.get("cat") == "cuda_runtime"}
    for m, e in zip(
        tl["steps"], sorted((e for e in raw if e["name"].startswith("ProfilerStep#")), key=lambda e: e["ts"])
    ):
        a, b = e["ts"], e["ts"] + e["dur"]
        mine = [k for k in ks if a <= launch[k["args"]["correlation"]] < b]
        assert m["number"] == int(e["name"][13:]) and m["label"] == e["name"]
        assert tl["t0"] + m["s"] == a
        # step time: from its start to the later of its CPU end and its last GPU end
        assert m["d"] == pytest.approx(max(b, max(k["ts"] + k["dur"] for k in mine)) - a, abs=1e-6)
        assert m["verdict"] == "CPU-bound"
    assert [m["d"] for m in tl["steps"]] == [r["step time (µs)"] for r in report.sheet("steps").records()]


def test_merge_rule_by_hand():
    # q = 4: starts 0 and 1 share bin 0, 5 is in bin 1, 12 in bin 3
    s, e = np.array([0.0, 1.0, 5.0, 12.0]), np.array([2.0, 3.0, 6.0, 13.0])
    idx, bs, be, cnt, busy = merge_blocks(s, e, 4.0)
    assert idx.tolist() == [0, 2, 3] and bs.tolist() == [0, 5, 12] and be.tolist() == [3, 6, 13]
    assert cnt.tolist() == [2, 1, 1] and busy.tolist() == [3, 1, 1]  # [0,2) ∪ [1,3) = 3
    idx, bs, be, cnt, busy = merge_blocks(s, e, None)
    assert cnt.tolist() == [1, 1, 1, 1] and busy.tolist() == [2, 1, 1, 1]  # overlap counted once


def _storm(tmp_path, n=6000, streams=(7, 8)):
    """n kernels per stream, 1-3 µs each with 0-4 µs gaps (deterministic), all launched."""
    rng = np.random.default_rng(7)
    ev = [{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#0", "pid": 1, "tid": 1, "ts": 0, "dur": 10}]
    corr = 0
    for st in streams:
        t = 100.0
        for i in range(n):
            corr += 1
            d, gap = float(rng.integers(1, 4)), float(rng.integers(0, 5))
            ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": t - 50, "dur": 1, "args": {"correlation": corr}})  # fmt: skip
            ev.append({"ph": "X", "cat": "kernel", "name": f"k{i % 5}", "pid": 0, "tid": st, "ts": t, "dur": d, "args": {"device": 0, "stream": st, "correlation": corr}})  # fmt: skip
            t += d + gap
    p = tmp_path / "storm.json"
    p.write_text(json.dumps({"traceEvents": ev}))
    tree = load_tree(str(p))
    arr = gpu_arrays(tree)
    steps = find_steps(tree)
    return tree, arr, steps, steps_sheet(tree, arr, steps).records()


def test_downsampling_keeps_busy_exact_and_within_the_bound(tmp_path):
    tree, arr, steps, recs = _storm(tmp_path)
    cap = 200_000
    tl = timeline_lanes(tree, arr, steps, recs, max_bytes=cap)
    assert tl["merged"] and tl["resolution"] in RESOLUTIONS and tl["bytes"] <= cap and tl["dropped"] == []
    q = tl["bin_us"]
    assert q == tl["span"] / tl["resolution"]
    for code, lane in zip(range(2), tl["lanes"]):
        m = arr.stream == code
        s, e = arr.ts[m] - tl["t0"], arr.te[m] - tl["t0"]
        assert sum(lane["n"]) == lane["events"] == m.sum() == 6000
        busy = float(np.sum(e - s))  # a stream's kernels do not overlap here: busy = their sum
        assert sum(lane["b"]) == pytest.approx(busy, rel=1e-12) == lane["busy"]
        merged = sum(1 for n in lane["n"] if n > 1)
        over = sum(lane["d"]) - sum(lane["b"])
        assert 0 <= over < q * merged  # the stated bound: under one bin of idle per merged block
        # each block's members are the events whose starts share its bin
        starts = np.sort(s)
        edges = np.searchsorted(starts, lane["s"])
        assert edges.tolist() == np.cumsum([0] + lane["n"][:-1]).tolist()
        for a, n in zip(edges, lane["n"]):
            assert len({int(np.floor(x / q)) for x in starts[a : a + n]}) == 1
    assert timeline_lanes(tree, arr, steps, recs)["merged"] is False  # under the default cap: all drawn


def test_payload_cap_drops_the_least_busy_lanes(tmp_path):
    tree, arr, steps, recs = _storm(tmp_path, n=400, streams=tuple(range(40)))
    tl = timeline_lanes(tree, arr, steps, recs, max_bytes=60_000)
    assert tl["resolution"] == RESOLUTIONS[-1] and tl["bytes"] <= 60_000
    assert tl["dropped"] and len(tl["lanes"]) + len(tl["dropped"]) == 40
    kept = min(lane["busy"] for lane in tl["lanes"])
    gone = {lane["label"]: lane["busy"] for lane in timeline_lanes(tree, arr, steps, recs)["lanes"]}
    assert all(gone[x] <= kept for x in tl["dropped"])
