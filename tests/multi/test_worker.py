"""multi/worker.py: one rank's analysis sent back as plain values (ranks, ops, timeline, steps,
coverage, audit), and the per-rank workbook written by the worker."""

from __future__ import annotations

import pickle

from perfreport.multi.worker import OP_KEY, analyze_trace, per_rank_name
from tests.kit import X, write_trace


def _trace(tmp_path, rank=1, name="rank1.json"):
    ev = [
        X("user_annotation", "ProfilerStep#3", 0, 100),
        X("cpu_op", "aten::mm", 10, 20),
        X("cuda_runtime", "cudaLaunchKernel", 12, 2, correlation=1),
        X("kernel", "gemm", 40, 8, pid=0, tid=7, device=0, stream=7, correlation=1),
    ]
    meta = {
        "distributedInfo": {"rank": rank, "world_size": "4"},
        "deviceProperties": [{"id": 0, "name": "NVIDIA H100 80GB HBM3"}, {"id": 1, "name": "NVIDIA H100 80GB HBM3"}],
        "baseTimeNanoseconds": 1_700_000_000_000_000_000,
    }
    return write_trace(tmp_path, ev, meta, name=name)


def test_per_rank_name():
    assert per_rank_name("/runs/rank0.json.gz") == "rank0_perf_report.xlsx"
    assert per_rank_name("trace.pt.trace.json") == "trace.pt.trace_perf_report.xlsx"


def test_analyze_trace_sends_back_plain_values(tmp_path):
    path = _trace(tmp_path)
    r = analyze_trace(path, {"arch": "h100", "basis": None})
    assert (r.path, r.dist_rank, r.world_size) == (path, 1, 4)
    assert r.base_ns == 1_700_000_000_000_000_000
    assert r.devices == "NVIDIA H100 80GB HBM3" and r.has_gpu
    assert r.spec_key is not None and r.per_rank_report is None
    mm = [o for o in r.ops if o[0] == "aten::mm"]
    assert len(mm) == 1 and len(mm[0]) == len(OP_KEY) + 3
    assert mm[0][len(OP_KEY) : len(OP_KEY) + 2] == [1, 8.0]  # count, time sum (µs)
    assert r.steps == [(3, 0.0, 100.0)]
    assert r.coverage is not None and set(r.audit) == {"notes", "rows", "count"}
    assert r.timeline and all(isinstance(row, list) for row in r.timeline)
    assert pickle.loads(pickle.dumps(r)) == r


def test_a_bad_rank_field_is_none_and_the_workbook_is_written(tmp_path):
    path = _trace(tmp_path, rank="zero")
    out = tmp_path / "per_rank"
    r = analyze_trace(path, {"per_rank_dir": str(out)})
    assert r.dist_rank is None and r.world_size == 4
    assert r.per_rank_report == str(out / "rank1_perf_report.xlsx")
    assert (out / "rank1_perf_report.xlsx").stat().st_size > 0
