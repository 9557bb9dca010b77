"""The HTML report in a real browser: headless Chromium (Debian package ``chromium``, installed
by .ci/run when it runs as root) loads it with networking off, the page's script runs, the
console stays empty (no error, no blocked load), and a screenshot shows the roofline points."""

from __future__ import annotations

import pytest

import perfreport
from tests.conftest import FIX
from tests.writers import chromium

pytestmark = pytest.mark.skipif(
    chromium.binary() is None,
    reason="headless Chromium is not installed (apt-get install chromium; .ci/run does it as root)",
)

GEMM_BLUE = (0x4E, 0x79, 0xA7)  # first palette colour: the category with most time
GEMM_FILL = tuple(round(0.6 * c + 0.4 * 255) for c in GEMM_BLUE)  # fill-opacity 0.6 on white


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    d = tmp_path_factory.mktemp("browser")
    p = d / "report.html"
    perfreport.analyze(FIX / "h100_qwen_0.5b.json.gz").to_html(p)
    return p


def test_loads_offline_script_runs_console_empty(page, tmp_path):
    r = chromium.run(page, tmp_path, "--dump-dom")
    assert r.returncode == 0, r.stderr[-2000:]
    assert 'data-ready="1"' in r.stdout  # the sorter's script ran to its end
    assert r.stdout.count('class="pt"') > 10  # the chart's points are in the DOM
    assert chromium.console_messages(r.stderr) == []


def test_console_check_catches_errors(tmp_path):
    bad = tmp_path / "bad.html"
    bad.write_text(
        '<!DOCTYPE html><html><body><img src="https://example.invalid/x.png">'
        '<script>throw new Error("boom")</script></body></html>'
    )
    msgs = chromium.console_messages(chromium.run(bad, tmp_path, "--dump-dom").stderr)
    assert any("boom" in m for m in msgs)


def test_screenshot_shows_the_chart(page, tmp_path):
    shot = tmp_path / "shot.png"
    r = chromium.run(page, tmp_path, f"--screenshot={shot}", "--window-size=1000,720", "--hide-scrollbars")
    assert r.returncode == 0 and shot.exists(), r.stderr[-2000:]
    img = chromium.png_pixels(shot).astype(int)
    assert img.shape == (720, 1000, 3)
    chart = img[150:]  # below the page title: the chart

    def near(c, tol=12):
        return (abs(chart - c) <= tol).all(axis=2)

    blue = int((near(GEMM_FILL) | near(GEMM_BLUE)).sum())
    assert blue > 500, f"only {blue} GEMM-coloured pixels: the chart did not render"
    assert (chart < 80).all(axis=2).sum() > 1000  # dark axis labels, ceilings, text
