"""The time-axis section of the HTML page (perfreport/writers/html_timeline.py): the data block
cannot close its element, the page allows only its own scripts by hash, what the page says."""

from __future__ import annotations

import base64
import hashlib
import json
import re

import pytest

import perfreport
from perfreport.writers.html import CSP, html_text
from perfreport.writers.html_timeline import merge_note, timeline_section
from perfreport.writers.html_timeline_js import TIMELINE_SCRIPT
from perfreport.writers.roofline_svg import colour_of
from tests.conftest import FIX

TRACE = FIX / "idle_launch_steps.json.gz"


@pytest.fixture(scope="module")
def report():
    return perfreport.analyze(str(TRACE))


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


def test_what_the_page_says_about_merging():
    tl = {"events": 12000, "blocks": 3100, "bytes": 150_000, "merged": True, "resolution": 4096, "bin_us": 12.5}
    assert merge_note(tl).startswith("Downsampled to fit the page: 12,000 GPU events drawn as 3,100 blocks")
    assert "span / 4,096 = 12.5 µs" in merge_note(tl) and "Left out" not in merge_note(tl)
    assert "Left out to fit: GPU 0 stream 9 (least busy)" in merge_note(dict(tl, dropped=["GPU 0 stream 9"]))
    assert merge_note(dict(tl, merged=False)) == "Every one of the 12,000 GPU events is drawn (data 146 KiB)."


def test_no_time_axis_data_unless_asked():
    r = perfreport.analyze(str(TRACE), timeline=False)  # what the CLI does without --html
    assert r.timeline is None and "No time axis" in html_text(r)
