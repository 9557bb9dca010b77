"""The merged multi-rank HTML page (perfreport/writers/html_ranks.py): its sections, escaping,
and, where headless Chromium is installed, that it loads offline with an empty console."""

from __future__ import annotations

import html

import pytest

from perfreport.multi import analyze_ranks
from perfreport.writers.html import CSP
from perfreport.writers.html_ranks import ranks_html_text
from tests.multi.rank_fragments import write_fragments
from tests.writers import chromium


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    d = tmp_path_factory.mktemp("page") / "run"
    write_fragments(d, 3, extra_pg=True)
    return analyze_ranks(str(d), engine="serial")


def test_sections_and_figures(report):
    text = ranks_html_text(report, top=50)
    assert f'content="{CSP}"' in text and "<script src" not in text and "<link" not in text
    for h in (
        "Roofline, all ranks",
        "Ranks",
        "GPU timeline by rank",
        "Top 2 of 2 ops by their slowest rank",
        "Collectives",
        "Notes",
    ):
        assert f"<h2>{h}" in text, h
    page = html.unescape(text)  # the page escapes ' as &#x27;
    for line in report.coverage.lines():  # the statement, each line once
        assert page.count(line) == 1, line
    assert text.count('class="pt"') == 3  # one aten::mm point per rank
    assert "rank 2: aten::mm" in text  # hover names the rank
    assert text.count('<p>GPU 0 of rank ') == 3  # one timeline bar per rank
    assert '<table id="top">' in text  # the sorter's table: ops_by_rank


def test_names_are_escaped(report):
    report.notes.append('<img src=x onerror="alert(1)">')
    try:
        text = ranks_html_text(report)
    finally:
        report.notes.pop()
    assert "<img src=x" not in text and "&lt;img src=x" in text


@pytest.mark.skipif(chromium.binary() is None, reason="headless Chromium is not installed")
def test_loads_offline_console_empty(report, tmp_path):
    page = tmp_path / "m.html"
    report.to_html(page)
    r = chromium.run(page, tmp_path, "--dump-dom")
    assert r.returncode == 0, r.stderr[-2000:]
    assert 'data-ready="1"' in r.stdout
    assert chromium.console_messages(r.stderr) == []
