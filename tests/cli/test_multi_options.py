"""`perfreport analyze DIR` (several traces, one per rank) with --min-coverage, --audit, --html,
--with-html and --format json: the options of a single trace, per rank and over all ranks."""

from __future__ import annotations

import json

import pytest

from tests.cli.forked_cli import run
from tests.multi.rank_fragments import write_fragments

# the fragments (tests/multi/rank_fragments.py): rank r models its aten::mm kernel, 10 (1 + r) µs,
# of 196 - 2r µs of GPU time: 5.1%, 10.3%, 15.6%, 21.1%; all four: 100 of 772 µs = 13.0%


# a real process: a child forked from the server that has imported the command line (tests/cli/forked_cli.py)
def cli(*args):
    return run("analyze", *args, text=True)


@pytest.fixture(scope="module")
def ranks(tmp_path_factory):
    d = tmp_path_factory.mktemp("multi") / "run"
    write_fragments(d, 4)
    return d


def test_min_coverage_names_each_rank_below_and_the_total(ranks, tmp_path):
    out = tmp_path / "m.xlsx"
    r = cli(ranks, "-o", out, "-q", "--engine", "serial", "--min-coverage", "12")
    assert r.returncode == 3, r.stderr
    assert r.stderr.splitlines() == [
        f"perfreport: rank 0 ({ranks / 'rank0.json'}): modelled 5.1% of the GPU time is below --min-coverage 12%",
        f"perfreport: rank 1 ({ranks / 'rank1.json'}): modelled 10.3% of the GPU time is below --min-coverage 12%",
    ]
    assert out.is_file()  # the report is still written
    r = cli(ranks, "-o", out, "-q", "--engine", "serial", "--min-coverage", "15")
    assert r.returncode == 3
    assert r.stderr.splitlines()[-1] == (
        "perfreport: all ranks: modelled 13.0% of the GPU time over 4 ranks is below --min-coverage 15%"
    )
    assert cli(ranks, "-o", out, "-q", "--engine", "serial", "--min-coverage", "5").returncode == 0


def test_audit_lists_flags_per_rank(tmp_path):
    d = tmp_path / "run"
    paths = write_fragments(d, 2)
    doc = json.loads(paths[1].read_text())
    k = next(e for e in doc["traceEvents"] if e["name"] == "gemm_kernel")
    # aten::mm 64x64x64 fp32: 3·64·64·4 = 49,152 B / 3.35e12 B/s = 0.0147 µs of roofline (memory
    # bound); run in 0.005 µs it is 293% of roofline, and 49 KB fit in the 50 MiB L2
    k["dur"] = 0.005
    paths[1].write_text(json.dumps(doc))
    r = cli(d, "--sheet", "ranks", "--format", "csv", "--engine", "serial", "--audit")
    assert r.returncode == 0, r.stderr
    out = r.stdout[r.stdout.index("self-audit") :].splitlines()
    assert out[0] == "self-audit (2 ranks)"
    i0, i1 = out.index(f"rank 0 ({paths[0]}):"), out.index(f"rank 1 ({paths[1]}):")
    rank0 = "\n".join(out[i0 + 1 : i1])
    # rank 0's fp32 aten::mm ran a kernel whose name does not say FP32 or TF32: an assumption, not a flag
    assert "above roofline" not in rank0 and out[i0 + 1].startswith("  flags: assumption: 1 row(s)")
    rank1 = "\n".join(out[i1 + 1 :])
    assert "above roofline: 1 row(s)" in rank1 and "aten::mm [64×64, 64×64] x1" in rank1
    assert "fit in the 50 MiB last-level cache" in rank1
    assert any(x.startswith("coverage of rank 1's ") for x in out[1:i0])


def test_html_one_page_for_the_merged_report(ranks, tmp_path):
    page = tmp_path / "m.html"
    r = cli(ranks, "--sheet", "ranks", "--html", page, "--top", "1", "-q", "--engine", "serial")
    assert r.returncode == 0, r.stderr
    text = page.read_text(encoding="utf-8")
    assert "<h1>perfreport: 4 ranks (merged)</h1>" in text
    assert "coverage of 772.0 µs GPU time over 4 ranks: modelled 13.0%" in text
    assert text.count('class="pt"') == 4  # aten::mm on each rank, on one chart
    assert "Top 1 of 2 ops by their slowest rank" in text
    assert not list(tmp_path.glob("*.xlsx"))  # --sheet without -o: no workbook
    out = tmp_path / "w.xlsx"
    assert cli(ranks, "-o", out, "--with-html", "-q", "--engine", "serial").returncode == 0
    assert (tmp_path / "w.html").is_file()


def test_html_target_checked_before_reading_and_with_html_needs_a_workbook(ranks, tmp_path):
    r = cli(ranks, "--sheet", "ranks", "--with-html", "-q")
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "--with-html" in r.stderr
    r = cli(ranks, "--sheet", "ranks", "--html", ranks / "rank0.json", "-q")
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "refusing to overwrite an input" in r.stderr


def test_json_sheet_carries_the_coverage_of_every_rank(ranks):
    r = cli(ranks, "--sheet", "ranks", "--format", "json", "--engine", "serial")
    assert r.returncode == 0, r.stderr
    cov = json.loads(r.stdout)["coverage"]
    assert cov["total (µs)"] == pytest.approx(772.0) and cov["modelled (µs)"] == pytest.approx(100.0)
    assert {k: v["modelled (µs)"] for k, v in cov["ranks"].items()} == pytest.approx(
        {"0": 10.0, "1": 20.0, "2": 30.0, "3": 40.0}
    )
