"""writers/console_multi.py: a merged multi-rank report on a terminal: ranks, top ops across ranks,
collectives when there are any, then the notes; every line within the console's width."""

from __future__ import annotations

import io

from rich.console import Console

from perfreport.multi.merge import merged_sheets
from perfreport.multi.worker import RankResult
from perfreport.tables import columns as C
from perfreport.writers.console_multi import print_summary_multi


def _result(rank, mm_us):
    return RankResult(
        path=f"/runs/a_rather_long_directory_name/rank{rank}.json.gz",
        dist_rank=rank,
        world_size=2,
        base_ns=None,
        spec_key="h100_sxm",
        arch_msg="",
        devices="NVIDIA H100",
        has_gpu=True,
        timeline=[[0, "busy", mm_us / 1e3, 90.0], [0, "idle", 0.01, 10.0]],
        ops=[["aten::mm", "GEMM", "(4096, 4096), (4096, 4096)", "c10::BFloat16", 10, mm_us, 55.0]],
        coverage={C.MODELLED_PCT: 90.0},
    )


class Report:
    source = "2 traces in /runs"
    arch_msg = "GPU: H100 SXM (from the traces)"
    notes = ["a note for the reader"]
    coverage = None

    def __init__(self):
        self.sheets = {
            s.name: s for s in merged_sheets([(1, "position", _result(1, 300.0)), (0, "position", _result(0, 200.0))])
        }
        self.sheet_names = list(self.sheets)

    def sheet(self, name):
        return self.sheets[name]


def _print(width):
    buf = io.StringIO()
    print_summary_multi(Report(), Console(file=buf, width=width, color_system=None))
    return buf.getvalue().splitlines()


def test_the_views_fit_and_hold_the_figures():
    for width in (80, 120):
        lines = _print(width)
        assert all(len(line) <= width for line in lines), width
    text = "\n".join(_print(120))
    assert "2 traces in /runs — GPU: H100 SXM (from the traces)" in text
    assert "ranks" in text and "top ops by time, across ranks (ops_by_rank)" in text
    assert "collectives" not in text  # no rank sent collective calls
    assert "aten::mm" in text and "a note for the reader" in text
    mm = next(line for line in _print(120) if "aten::mm" in line)
    # min, median, max over the two ranks; slowest rank 1; max / median = 300 / 250
    assert "200 µs  250 µs  300 µs" in mm and mm.split()[-2:] == ["1", "1.20"]
