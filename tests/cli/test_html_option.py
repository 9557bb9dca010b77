"""analyze --html FILE / --with-html, --top, and the no-spec message naming the device."""

from __future__ import annotations

import gzip
import json

from tests.cli.forked_cli import run as forked_run
from tests.conftest import FIX

TRACE = FIX / "h100_qwen_0.5b.json.gz"


# a real process: a child forked from the server that has imported the command line (tests/cli/forked_cli.py)
def run(*args, cwd=None):
    return forked_run(*args, text=True, cwd=cwd)


def test_html_file_and_top(tmp_path):
    page = tmp_path / "p.html"
    r = run("analyze", str(TRACE), "--sheet", "gpu_timeline", "--html", str(page), "--top", "7", "-q")
    assert r.returncode == 0, r.stderr
    text = page.read_text(encoding="utf-8")
    assert text.count("<tr>") - 1 >= 7 and "Top 7 of " in text
    assert not list(tmp_path.glob("*.xlsx"))  # --sheet without -o: no workbook


def test_with_html_beside_the_workbook(tmp_path):
    out = tmp_path / "r.xlsx"
    r = run("analyze", str(TRACE), "-o", str(out), "--with-html")
    assert r.returncode == 0, r.stderr
    assert out.exists() and (tmp_path / "r.html").exists()
    assert f"wrote {tmp_path / 'r.html'}" in r.stderr


def test_with_html_needs_a_workbook(tmp_path):
    r = run("analyze", str(TRACE), "--sheet", "gpu_timeline", "--with-html", cwd=tmp_path)
    assert r.returncode == 2
    assert r.stderr.strip().splitlines() == [
        "perfreport: --with-html needs a workbook (-o FILE, or no --sheet); use --html FILE"
    ]


def test_html_never_overwrites_the_input(tmp_path):
    t = tmp_path / "t.json.gz"
    t.write_bytes(TRACE.read_bytes())
    r = run("analyze", str(t), "--html", str(t), "-q")
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1
    assert t.read_bytes() == TRACE.read_bytes()


def test_no_spec_matched_names_the_device(tmp_path):
    doc = json.loads(gzip.open(TRACE).read())
    doc["deviceProperties"] = [{"id": 0, "name": "Imaginary GPU 9000"}]
    p = tmp_path / "t.json"
    p.write_text(json.dumps(doc))
    r = run("analyze", str(p), "-o", str(tmp_path / "r.xlsx"), "--html", str(tmp_path / "r.html"))
    assert r.returncode == 0, r.stderr
    assert "none matched" in r.stderr and "Imaginary GPU 9000" in r.stderr
    page = (tmp_path / "r.html").read_text(encoding="utf-8")
    assert 'class="ceiling"' not in page and "no GPU spec: no ceilings" in page
    assert 'class="pt"' in page  # FLOPs and bytes come from the models, not the spec
