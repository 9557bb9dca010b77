"""The time axis's script (perfreport/writers/html_timeline_js.py) in headless Chromium over the
DevTools protocol (tests/writers/cdp.py; skipped without Chromium): lanes drawn in the category's
colour, wheel zoom about the cursor, drag pan, double-click reset, hover tooltip, and no console
message, exception or CSP violation (a check shown to see a blocked script)."""

from __future__ import annotations

import pytest

import perfreport
from perfreport.writers.html import CSP
from perfreport.writers.html_timeline_js import LABEL_W, LANE_H, RULER_H, STEP_H
from perfreport.writers.roofline_svg import colour_of
from tests.conftest import FIX
from tests.writers import chromium

TRACE = FIX / "idle_launch_steps.json.gz"


@pytest.fixture(scope="module")
def report():
    return perfreport.analyze(str(TRACE))


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
