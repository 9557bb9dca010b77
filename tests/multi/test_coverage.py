"""Coverage of a multi-rank run (perfreport/multi/coverage.py): per rank and over all ranks, the
same figures in the notes, the notes sheet, the console and the JSON; the per-rank audit and
chart points that travel back from the workers."""

from __future__ import annotations

import io
import json

import openpyxl
import pytest
from rich.console import Console

import perfreport
from perfreport.multi import analyze_ranks
from perfreport.writers.console_multi import print_summary_multi
from perfreport.writers.text import json_text

from rank_fragments import write_fragments


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    d = tmp_path_factory.mktemp("cov")
    paths = write_fragments(d / "run", 4)
    return paths, analyze_ranks(str(d / "run"), engine="serial")


def test_per_rank_and_total_hand_values(run):
    paths, rep = run
    cov = rep.coverage
    # each rank: its aten::mm kernel 10 (1 + r) µs is modelled; the rest is its three all-reduce
    # kernels (communication). GPU time per rank (the ranks sheet): 196, 194, 192, 190 µs
    assert [c.total_us for c in cov.ranks.values()] == pytest.approx([196.0, 194.0, 192.0, 190.0])
    assert [c.modelled_us for c in cov.ranks.values()] == pytest.approx([10.0, 20.0, 30.0, 40.0])
    assert cov.ranks[3].modelled_pct == pytest.approx(100 * 40 / 190)  # 21.05%
    # all ranks: 100 of 772 µs = 12.95% modelled, 672 µs communication
    assert cov.total.total_us == pytest.approx(772.0)
    assert cov.modelled_pct == pytest.approx(100 * 100 / 772)
    assert cov.total.communication_us == pytest.approx(672.0)
    assert cov.total.parts_us == pytest.approx(cov.total.total_us)
    # each rank's statement is the one its own single-trace report makes
    for rank, p in enumerate(paths):
        assert cov.ranks[rank].to_dict() == perfreport.analyze(str(p)).coverage.to_dict()
    lines = cov.lines()
    assert lines[0] == (
        "coverage of 772.0 µs GPU time over 4 ranks: modelled 13.0%, communication 87.0%, "
        "memcpy/memset 0.0%, unmodelled 0.0%"
    )
    assert lines[-4:] == [
        "coverage of rank 0's 196.0 µs GPU time: modelled 5.1%, communication 94.9%, memcpy/memset 0.0%, unmodelled 0.0%",
        "coverage of rank 1's 194.0 µs GPU time: modelled 10.3%, communication 89.7%, memcpy/memset 0.0%, unmodelled 0.0%",
        "coverage of rank 2's 192.0 µs GPU time: modelled 15.6%, communication 84.4%, memcpy/memset 0.0%, unmodelled 0.0%",
        "coverage of rank 3's 190.0 µs GPU time: modelled 21.1%, communication 78.9%, memcpy/memset 0.0%, unmodelled 0.0%",
    ]
    # --min-coverage 15: ranks 0 (5.1%) and 1 (10.3%) and the total (13.0%) are under
    assert [(r, round(p, 1)) for r, p, _ in cov.below(15.0)] == [(0, 5.1), (1, 10.3), (None, 13.0)]
    assert cov.below(5.0) == []
    ranks = rep.sheet("ranks").records()
    assert [r["modelled (%)"] for r in ranks] == pytest.approx([c.modelled_pct for c in cov.ranks.values()])


def test_every_output_states_the_same_figures(run, tmp_path):
    _, rep = run
    lines = rep.coverage.lines()
    assert [n for n in rep.notes if "coverage" in n] == lines
    rep.to_excel(tmp_path / "m.xlsx")
    wb = openpyxl.load_workbook(tmp_path / "m.xlsx", read_only=True)
    notes = [r[1] for r in wb["notes"].iter_rows(min_row=2, values_only=True)]
    wb.close()
    assert [n for n in notes if "coverage" in n] == lines  # each once, in order
    con = Console(file=io.StringIO(), width=400)
    print_summary_multi(rep, con)
    out = con.file.getvalue()
    assert all(out.count(x) == 1 for x in lines)
    doc = json.loads(json_text(rep.sheet("ranks"), rep.coverage))
    assert doc["coverage"]["modelled (%)"] == pytest.approx(100 * 100 / 772)
    assert doc["coverage"]["ranks"]["2"]["modelled (µs)"] == pytest.approx(30.0)
    assert json.loads(rep.to_json())["coverage"] == doc["coverage"]


def test_workers_send_the_audit_and_chart_points(run):
    _, rep = run
    assert sorted(rep.rank_audits) == [0, 1, 2, 3]
    # one thing to audit per rank: the FP32 aten::mm's kernel ("gemm_kernel") does not say whether
    # it ran on TF32 or FP32 cores, so its figure is an assumption with [TF32, FP32] bounds
    for a in rep.rank_audits.values():
        assert a["count"] == 1 and [(r["flag"], r["name"]) for r in a["rows"]] == [("assumption", "aten::mm")]
        assert a["rows"][0]["detail"].startswith("FP32 math: FP32 CUDA cores")
    # one chart point per rank: aten::mm, 2·64³ = 524,288 FLOP over 3·64·64·4 = 49,152 B
    pts = rep.rank_points
    assert [len(pts[r]) for r in range(4)] == [1, 1, 1, 1]
    assert pts[0][0]["ai"] == pytest.approx(524288 / 49152)
    # achieved 524,288 FLOP in 10 (1 + r) µs: 0.0524 TFLOP/s on rank 0
    assert pts[0][0]["tflops"] == pytest.approx(524288 / 10e-6 / 1e12)
