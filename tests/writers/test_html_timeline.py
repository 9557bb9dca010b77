"""The HTML page's time axis (perfreport/tables/lanes.py, perfreport/writers/html_timeline*.py):
lanes, idle rows and step markers checked against the raw events of a real capture, the
downsampling rule and its bound on a synthetic storm, the payload cap; then the page in
headless Chromium (skipped without it): lanes drawn, wheel zoom, drag pan, double-click reset,
hover tooltip, no console message and no CSP violation."""

from __future__ import annotations

import base64
import gzip
import hashlib
import json
import re

import numpy as np
import pytest

import perfreport
from perfreport.pipeline import load_tree
from perfreport.tables.gpu_arrays import gpu_arrays
from perfreport.tables.steps import steps_sheet
from perfreport.tables.lanes import RESOLUTIONS, merge_blocks, timeline_lanes
from perfreport.tree.steps import find_steps
from perfreport.writers.html import CSP, html_text
from perfreport.writers.html_timeline import timeline_section
from perfreport.writers.html_timeline_js import LABEL_W, LANE_H, RULER_H, STEP_H, TIMELINE_SCRIPT
from perfreport.writers.roofline_svg import colour_of
from tests.conftest import FIX
from tests.writers import chromium

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
    assert "Downsampled to fit the page: 12,000 GPU events drawn as" in timeline_section(tl)


def test_payload_cap_drops_the_least_busy_lanes(tmp_path):
    tree, arr, steps, recs = _storm(tmp_path, n=400, streams=tuple(range(40)))
    tl = timeline_lanes(tree, arr, steps, recs, max_bytes=60_000)
    assert tl["resolution"] == RESOLUTIONS[-1] and tl["bytes"] <= 60_000
    assert tl["dropped"] and len(tl["lanes"]) + len(tl["dropped"]) == 40
    kept = min(lane["busy"] for lane in tl["lanes"])
    gone = {lane["label"]: lane["busy"] for lane in timeline_lanes(tree, arr, steps, recs)["lanes"]}
    assert all(gone[x] <= kept for x in tl["dropped"])
    assert "Left out to fit: " in timeline_section(tl)


def test_the_page_embeds_data_safely_and_allows_only_its_scripts(report):
    page = html_text(report)
    h = base64.b64encode(hashlib.sha256(TIMELINE_SCRIPT.encode()).digest()).decode()
    assert f"'sha256-{h}'" in CSP and f"<script>{TIMELINE_SCRIPT}</script>" in page
    assert page.count("<script>") == 2 and "'unsafe-inline'" not in CSP.split("script-src")[1]
    blob = re.search(r'<script type="application/json" id="tl-data">(.*?)</script>', page, re.S).group(1)
    assert json.loads(blob)["colours"] == [colour_of(c) for c in report.timeline["cats"]]
    tl = dict(report.timeline, names=["</script><script>alert(1)</script>"] + report.timeline["names"][1:])
    sec = timeline_section(tl)
    assert "</script><script>alert" not in sec
    blob = re.search(r'id="tl-data">(.*?)</script>', sec, re.S).group(1)
    assert json.loads(blob)["names"][0] == "</script><script>alert(1)</script>"
    assert "Every one of the 76 GPU events is drawn" in page
    assert "No time axis" in timeline_section(None) and "no GPU events" in timeline_section({})


# ---- in a browser ------------------------------------------------------------------------------
needs_chromium = pytest.mark.skipif(
    chromium.binary() is None,
    reason="headless Chromium is not installed (apt-get install chromium; .ci/run does it as root)",
)


def _attrs(b):
    return b.js(
        "(function(c){return [+c.dataset.v0, +c.dataset.v1, +c.dataset.drawn]})(document.getElementById('tl-canvas'))"
    )


@needs_chromium
def test_in_chromium_lanes_zoom_pan_reset_hover_no_console(report, tmp_path):
    from tests.writers.cdp import Browser

    page = tmp_path / "r.html"
    report.to_html(page)
    tl = report.timeline
    b = Browser(tmp_path)
    try:
        b.load(page)
        assert b.js("document.getElementById('tl').dataset.ready") == "1"
        b.js("document.getElementById('tl').scrollIntoView()")
        r = b.js(
            "(function(r){return [r.left, r.top, r.width]})(document.getElementById('tl-canvas').getBoundingClientRect())"
        )
        left, top, width = r
        v0, v1, drawn = _attrs(b)
        assert (v0, v1) == (0, tl["span"])
        assert drawn == 76 + len(tl["idle"][0]["s"])  # every block in the full view
        # the GEMM (mm) kernels are drawn in their fixed colour on stream 7's row
        lane_y = top + RULER_H + STEP_H + 2 + LANE_H / 2
        pw = width - LABEL_W - 8
        lane = tl["lanes"][0]
        mm = max(range(len(lane["s"])), key=lambda i: lane["d"][i])
        x = left + LABEL_W + (lane["s"][mm] + lane["d"][mm] / 2) / tl["span"] * pw
        px = b.js(
            f"Array.from(document.getElementById('tl-canvas').getContext('2d').getImageData("
            f"{(x - left) * 1:.0f},{lane_y - top:.0f},1,1).data).slice(0,3)"
        )
        assert px == [int(colour_of("GEMM")[i : i + 2], 16) for i in (1, 3, 5)]
        # hover: the tooltip names the kernel, its op, category and step
        b.mouse("mouseMoved", x, lane_y)
        hidden, text = b.js("(function(t){return [t.hidden, t.textContent]})(document.getElementById('tl-tip'))")
        assert not hidden
        assert "mm_kernel" in text and "op: aten::mm" in text and "GEMM" in text
        assert f"step {tl['steps'][lane['t'][mm]]['number']} (ProfilerStep#" in text
        # wheel: zooms in about the cursor (the time under it stays put)
        t_at = (x - left - LABEL_W) / pw * tl["span"]
        b.mouse("mouseWheel", x, lane_y, deltaX=0, deltaY=-120)
        z0, z1, _ = _attrs(b)
        assert z1 - z0 == pytest.approx(0.8 * tl["span"])
        px_us = tl["span"] / pw  # the events carry whole-pixel coordinates: within a pixel
        assert z0 + (x - left - LABEL_W) / pw * (z1 - z0) == pytest.approx(t_at, abs=px_us)
        for _ in range(6):
            b.mouse("mouseWheel", x, lane_y, deltaX=0, deltaY=-120)
        z0, z1, _ = _attrs(b)
        assert z1 - z0 == pytest.approx(0.8**7 * tl["span"])
        # drag: pans by the distance moved, same width
        b.mouse("mousePressed", x, lane_y, button="left", clickCount=1)
        b.mouse("mouseMoved", x - 100, lane_y, button="left")
        b.mouse("mouseReleased", x - 100, lane_y, button="left", clickCount=1)
        p0, p1, _ = _attrs(b)
        assert p1 - p0 == pytest.approx(z1 - z0) and p0 - z0 == pytest.approx(100 / pw * (z1 - z0), abs=px_us)
        # double-click: back to the full view
        b.mouse("mousePressed", x, lane_y, button="left", clickCount=2)
        b.mouse("mouseReleased", x, lane_y, button="left", clickCount=2)
        assert _attrs(b)[:2] == [0, tl["span"]]
        assert b.problems() == []  # no console message, exception or CSP violation
    finally:
        b.close()


@needs_chromium
def test_in_chromium_the_check_sees_a_blocked_script(tmp_path):
    from tests.writers.cdp import Browser

    bad = tmp_path / "bad.html"
    bad.write_text(
        f'<!DOCTYPE html><html><head><meta http-equiv="Content-Security-Policy" content="{CSP}"></head>'
        "<body><script>document.title='ran'</script></body></html>"
    )
    b = Browser(tmp_path)
    try:
        b.load(bad)
        assert b.js("document.title") != "ran"
        assert any("Content Security Policy" in p for p in b.problems())
    finally:
        b.close()


def test_no_time_axis_data_unless_asked():
    r = perfreport.analyze(str(TRACE), timeline=False)  # what the CLI does without --html
    assert r.timeline is None and "No time axis" in html_text(r)
