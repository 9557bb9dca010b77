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

GEMM_BLUE = (0x4E, 0x79, 0xA7)  # GEMM's fixed colour (roofline_svg.CATEGORY_COLOURS)
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


def test_sorting_puts_blank_cells_last(tmp_path):
    """Click the roofline % header twice (descending, then ascending): rows without a figure
    stay at the bottom both ways."""
    from perfreport.writers.html import CSP, html_text

    rep = perfreport.analyze(FIX / "h100_qwen_0.5b.json.gz")
    text = html_text(rep)
    click = (
        "<script>(function(){var t=document.getElementById('top'),h=t.tHead.rows[0].cells,k=-1;"
        "for(var i=0;i<h.length;i++){if(h[i].textContent.indexOf('roofline %')===0){k=i;}}"
        "var out=[];for(var n=0;n<2;n++){h[k].click();var rs=t.tBodies[0].rows;"
        "out.push(rs[0].cells[k].textContent+'|'+rs[rs.length-1].cells[k].textContent);}"
        "document.body.setAttribute('data-sorted',out.join(';'));})();</script></body>"
    )
    p = tmp_path / "sort.html"
    # the page's CSP runs only its own script (by hash): this copy drops it for the test's clicks
    text = text.replace(f'<meta http-equiv="Content-Security-Policy" content="{CSP}">', "", 1)
    p.write_text(text.replace("</body>", click, 1), encoding="utf-8")
    r = chromium.run(p, tmp_path, "--dump-dom")
    got = r.stdout.split('data-sorted="', 1)[1].split('"', 1)[0].split(";")
    for pair in got:
        first, last = pair.split("|")
        assert first != "" and last == "", got  # a figure on top, a blank at the bottom


def test_chart_zooms_on_the_wheel_and_resets_on_double_click(tmp_path):
    from perfreport.writers.html import CSP, html_text

    text = html_text(perfreport.analyze(FIX / "h100_qwen_0.5b.json.gz"))
    text = text.replace(f'<meta http-equiv="Content-Security-Policy" content="{CSP}">', "", 1)  # for the test's events
    act = (
        "<script>(function(){var s=document.getElementById('roofline'),r=s.getBoundingClientRect(),o=[];"
        "var w=function(d){s.dispatchEvent(new WheelEvent('wheel',{deltaY:d,clientX:r.left+r.width/2,"
        "clientY:r.top+r.height/2,cancelable:true}));};"
        "w(-100);w(-100);o.push(s.getAttribute('data-zoom'),s.getAttribute('viewBox'));"
        "s.dispatchEvent(new MouseEvent('dblclick'));o.push(s.getAttribute('data-zoom'));"
        "document.body.setAttribute('data-zoomed',o.join(';'));})();</script></body>"
    )
    p = tmp_path / "zoom.html"
    p.write_text(text.replace("</body>", act, 1), encoding="utf-8")
    r = chromium.run(p, tmp_path, "--dump-dom")
    zoom, box, reset = r.stdout.split('data-zoomed="', 1)[1].split('"', 1)[0].split(";")
    assert zoom == "1.56" and box != "0 0 960 560" and reset == "1.00"
