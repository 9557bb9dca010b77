"""Collectives of traces without record_param_comms metadata (perfreport/multi/inferred_calls.py), on
the 8-rank DLRM step of facebookresearch/param (fixtures/corpus/param/, PyTorch 2.0-era: nccl:* user
annotations with Input Dims, c10d::* ops, ncclKernel_* kernels, no 'Collective name'). On main before
this change: 'collective calls' 0 on every rank and no collectives sheet."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from perfreport.multi import analyze_ranks
from perfreport.multi.inferred_calls import collective_of

DLRM = sorted((Path(__file__).resolve().parents[2] / "fixtures" / "corpus" / "param").glob("dlrm_worker*.json.gz"))


def _events(path):
    return json.loads(gzip.open(path).read())["traceEvents"]


@pytest.fixture(scope="module")
def dlrm():
    assert len(DLRM) == 8
    return analyze_ranks([str(p) for p in DLRM], jobs=1)


@pytest.mark.parametrize(
    "name, coll",
    [
        ("nccl:all_reduce", "all_reduce"),
        ("nccl:_allgather_base", "_allgather_base"),
        ("c10d::alltoall_base_", "alltoall_base"),
        ("ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)", "AllReduce"),
        ("ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)", "AllGather"),
        ("void at::native::vectorized_elementwise_kernel<4>", None),
        ("aten::mm", None),
    ],
)
def test_collective_names(name, coll):
    assert collective_of(name) == coll


def test_every_rank_has_its_calls_and_the_sheet_exists(dlrm):
    ranks = dlrm.sheet("ranks").records()
    assert [r["collective calls"] for r in ranks] == [8] * 8  # 5 all_to_all + 3 all_reduce per rank
    rows = dlrm.sheet("collectives").records()
    assert len(rows) == 8
    assert sorted(r["collective"] for r in rows) == ["all_reduce"] * 3 + ["all_to_all"] * 5
    assert all(r["ranks seen"] == r["group size"] == 8 and r["found by"] == "nccl annotation" for r in rows)
    assert any("no record_param_comms metadata" in n for n in dlrm.sheet("collectives").notes)


def test_all_reduce_message_and_bandwidth_by_hand(dlrm):
    # the first all-reduce: nccl:all_reduce Input Dims [[394241]], "float" -> 394,241 x 4 B
    row = next(r for r in dlrm.sheet("collectives").records() if r["collective"] == "all_reduce")
    assert row["in msg nelems"] == 394241 and row["message size (B)"] == 1_576_964
    # transfer time from the raw files: the first ncclKernel_AllReduce on each rank
    starts, ends = [], []
    for p in DLRM:
        k = next(e for e in _events(p) if e.get("cat") == "kernel" and e["name"].startswith("ncclKernel_AllReduce"))
        starts.append(k["ts"])
        ends.append(k["ts"] + k["dur"])
    xfer = max(ends) - max(starts)
    assert row["transfer time (µs)"] == pytest.approx(xfer)
    assert row["start skew (µs)"] == pytest.approx(max(starts) - min(starts))
    algbw = 1_576_964 / xfer / 1e3  # GB/s
    assert row["algbw (GB/s)"] == pytest.approx(algbw)
    assert row["busbw (GB/s)"] == pytest.approx(algbw * 2 * 7 / 8)  # nccl-tests all-reduce factor


def test_all_to_all_dtype_from_the_annotation(dlrm):
    rows = [r for r in dlrm.sheet("collectives").records() if r["collective"] == "all_to_all"]
    assert {(r["dtype"], r["in msg nelems"]) for r in rows} >= {("long int", 24), ("int", 384), ("float", 6144)}
    small = next(r for r in rows if r["dtype"] == "long int")
    assert small["message size (B)"] == 24 * 8
