"""multi/merge.py: the merged sheets from the ranks' compact results (ranks, ops_by_rank,
gpu_timeline_by_rank), worked by hand on three made-up ranks."""

from __future__ import annotations

import pytest

from perfreport.multi.merge import RANK_COLUMNS, merged_sheets, ops_by_rank, ranks_sheet, timeline_by_rank
from perfreport.multi.worker import RankResult
from perfreport.tables import columns as C


def _result(rank, ops, timeline=()):
    return RankResult(
        path=f"rank{rank}.json",
        dist_rank=rank,
        world_size=3,
        base_ns=None,
        spec_key="h100_sxm",
        arch_msg="",
        devices="NVIDIA H100",
        has_gpu=True,
        timeline=[list(t) for t in timeline],
        ops=[list(o) for o in ops],
        coverage={C.MODELLED_PCT: 50.0 + rank},
    )


MM = ("aten::mm", "GEMM", "(4, 8)", "float")
ADD = ("aten::add", "elementwise", "(4,)", "float")
RANKED = [
    (
        0,
        "position",
        _result(0, [MM + (2, 10.0, None), ADD + (1, 1.0, None)], [(0, "busy", 2.0, 80.0), (0, "total", 2.5, 100.0)]),
    ),
    (1, "position", _result(1, [MM + (2, 30.0, None)])),
    (2, "position", _result(2, [MM + (3, 20.0, None), ADD + (1, 2.0, None)])),
]


def test_ops_by_rank_min_median_max_and_the_slowest():
    sheet = ops_by_rank(RANKED)
    mm, add = sheet.records()
    assert (mm[C.NAME], mm[C.RANKS_WITH_IT], mm[C.COUNT_MAX]) == ("aten::mm", 3, 3)
    assert (mm[C.TIME_MIN_US], mm[C.TIME_MEDIAN_US], mm[C.TIME_MAX_US], mm[C.TIME_SUM_US]) == (10.0, 20.0, 30.0, 60.0)
    assert (mm[C.SLOWEST_RANK], mm[C.MAX_PER_MEDIAN]) == (1, 1.5)
    assert [mm[C.rank_time(r)] for r in (0, 1, 2)] == [10.0, 30.0, 20.0]
    # add did not run on rank 1: 0 there; median of (1, 0, 2) = 1
    assert (add[C.RANKS_WITH_IT], add[C.TIME_MIN_US], add[C.TIME_MEDIAN_US], add[C.SLOWEST_RANK]) == (2, 0.0, 1.0, 2)
    assert add[C.MAX_PER_MEDIAN] == 2.0


def test_per_rank_columns_only_up_to_the_limit():
    many = [(r, "position", _result(r, [MM + (1, 1.0, None)])) for r in range(RANK_COLUMNS + 1)]
    sheet = ops_by_rank(many)
    assert C.rank_time(0) not in sheet.columns
    assert any("per-rank columns left out" in n for n in sheet.notes)


def test_ranks_sheet_and_timeline_by_rank():
    rows = ranks_sheet(RANKED).records()
    assert [(r[C.RANK], r[C.TRACE], r[C.KERNEL_TIME_US], r[C.MODELLED_PCT]) for r in rows] == [
        (0, "rank0.json", 11.0, 50.0),
        (1, "rank1.json", 30.0, 51.0),
        (2, "rank2.json", 22.0, 52.0),
    ]
    assert (rows[0][C.BUSY_MS], rows[0][C.TOTAL_MS], rows[1][C.BUSY_MS]) == (2.0, 2.5, None)
    assert timeline_by_rank(RANKED).rows == [[0, 0, "busy", 2.0, 80.0], [0, 0, "total", 2.5, 100.0]]


def test_merged_sheets_sorted_by_rank_without_collectives():
    sheets = merged_sheets(list(reversed(RANKED)))
    assert [s.name for s in sheets] == ["ranks", "ops_by_rank", "gpu_timeline_by_rank"]
    assert [r[C.RANK] for r in sheets[0].records()] == [0, 1, 2]
    assert sheets[1].records()[0][C.TIME_SUM_US] == pytest.approx(60.0)
