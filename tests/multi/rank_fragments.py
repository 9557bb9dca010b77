"""Small generated multi-rank traces: a few kernels and collective calls with known offsets."""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))
import make_rank_traces as mrt  # noqa: E402

H100_PROPS = [
    {
        "id": 0,
        "name": "NVIDIA H100 80GB HBM3",
        "totalGlobalMem": 85045526528,
        "computeMajor": 9,
        "computeMinor": 0,
        "numSms": 132,
    }
]
BASE_NS = 1_700_000_000_000_000_000


def fragment(
    rank: int,
    ranks: int,
    *,
    calls: int = 3,
    base_shift_ns: int = 0,
    seq: bool = True,
    drop_call: int | None = None,
    extra_pg: bool = False,
    kernels_only: bool = False,
) -> dict:
    """One rank's trace: one compute kernel and ``calls`` all-reduces (scripts/make_rank_traces.py
    timing: rank r arrives at call i (3 + i % 3) * r µs after rank 0). ``base_shift_ns`` moves
    this rank's baseTimeNanoseconds and shifts its ts back by the same amount (same instants).
    ``kernels_only``: the collectives are only their NCCL kernels (fields in the kernel args)."""
    shift_us = base_shift_ns / 1000.0
    ev = [
        {
            "ph": "X",
            "cat": "cpu_op",
            "name": "aten::mm",
            "pid": 1,
            "tid": 1,
            "ts": 10.0 - shift_us,
            "dur": 20.0,
            "args": {"External id": 1, "Input Dims": [[64, 64], [64, 64]], "Input type": ["float", "float"]},
        },
        {
            "ph": "X",
            "cat": "cuda_runtime",
            "name": "cudaLaunchKernel",
            "pid": 1,
            "tid": 1,
            "ts": 12.0 - shift_us,
            "dur": 5.0,
            "args": {"correlation": 1, "External id": 1},
        },
        {
            "ph": "X",
            "cat": "kernel",
            "name": "gemm_kernel",
            "pid": 0,
            "tid": 7,
            "ts": 20.0 - shift_us,
            "dur": 10.0 * (1 + rank),
            "args": {"device": 0, "stream": 7, "correlation": 1},
        },
    ]
    comm = mrt.collective_events(rank, ranks, calls, 100.0, 100.0 + 1000.0 * calls, 1, 0)
    out = []
    for n, e in enumerate(comm):  # (record_param_comms, launch, kernel) per call
        e = dict(e, ts=e["ts"] - shift_us, args=dict(e["args"]))
        i = n // 3
        if drop_call is not None and i == drop_call:
            continue
        if kernels_only and e["cat"] != "kernel":  # no record_param_comms, no launch
            continue
        if not seq:
            e["args"].pop("Seq", None)
        out.append(e)
    if extra_pg:  # a second group with Seq 1 too, on another stream
        for e in mrt.collective_events(rank, ranks, 1, 50.0, 90.0, 1, 0):
            e = dict(e, ts=e["ts"] - shift_us, args=dict(e["args"]))
            e["args"]["External id"] += 500
            if "correlation" in e["args"]:
                e["args"]["correlation"] += 500
            if "Collective name" in e["args"]:
                e["args"].update({"Process Group Name": "1", "Process Group Description": "tp"})
            if not seq:
                e["args"].pop("Seq", None)
            out.append(e)
    return {
        "schemaVersion": 1,
        "deviceProperties": H100_PROPS,
        "distributedInfo": {"backend": "nccl", "rank": rank, "world_size": ranks},
        "baseTimeNanoseconds": BASE_NS + base_shift_ns,
        "traceEvents": ev + out,
    }


def write_fragments(d: Path, ranks: int, name="rank{r}.json", with_rank=True, **kw) -> list[Path]:
    d.mkdir(parents=True, exist_ok=True)
    paths = []
    for r in range(ranks):
        doc = fragment(r, ranks, **kw)
        if not with_rank:
            del doc["distributedInfo"]
        p = d / name.format(r=r)
        p.write_text(json.dumps(doc))
        paths.append(p)
    return paths
