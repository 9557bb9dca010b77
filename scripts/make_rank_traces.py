"""Build N rank traces from one real trace, with rank fields and collectives set consistently.

    python scripts/make_rank_traces.py SOURCE OUT_DIR [--ranks 4] [--copies 1] [--collectives 8] [--no-gzip]

Each rank's file ``rank<r>.json[.gz]`` holds ``copies`` back-to-back copies of SOURCE's events
(timestamps shifted past the previous copy; ``correlation``, ``External id`` and flow ids
offset so kernels still link to their launches), every GPU event duration scaled by
``1 + 0.05 r`` (so ranks differ; the later events of its stream pushed back by as much),
``distributedInfo`` = {rank r, world_size N}, and
``collectives`` all-reduce calls the way Kineto records them: a ``record_param_comms``
cpu_op (``Collective name``, ``dtype``, ``In/Out msg nelems``, ``Group size``,
``Process Group Name/Description/Ranks``, ``Seq``) launching one NCCL kernel (the same
fields in its args). Rank r reaches call i ``arrival_us(r, i)`` µs after rank 0 and every
rank's kernel ends at the same time, as a blocking collective does: the straggler (last
rank) has the shortest kernel. Used by tests/multi and benchmarks/bench_multi.py.
"""

from __future__ import annotations

import argparse
import gzip
import json
from pathlib import Path

import orjson

COMM_TID = 424242  # the CPU thread the collectives are issued on
COMM_STREAM = 99
CORR0 = 900_000_000  # correlation ids of the injected launches
KERNEL_US = 50.0  # the straggler's kernel time (the transfer itself)
NELEMS = 1 << 22  # 4 Mi bf16 elements = 8 MiB per all-reduce


def arrival_us(rank: int, i: int) -> float:
    """When rank ``rank`` reaches collective ``i``, after rank 0 (µs)."""
    return (3.0 + (i % 3)) * rank


GPU_CATS = ("kernel", "gpu_memset", "gpu_memcpy")


def _stretch_plan(events, scale: float):
    """Per GPU event index: (extra µs, extra µs of the earlier events on its stream), and the
    total extra per stream: a longer kernel pushes its stream's later events back, so no
    stream runs two events at once by the stretch (same-stream overlaps count once)."""
    gpu = [i for i, e in enumerate(events) if e.get("cat") in GPU_CATS and "dur" in e and "ts" in e]
    gpu.sort(key=lambda i: events[i]["ts"])
    acc: dict = {}
    plan = {}
    for i in gpu:
        e = events[i]
        a = e.get("args") or {}
        key = (a.get("device", e.get("pid")), a.get("stream", e.get("tid")))
        extra = round(e["dur"] * scale, 3) - e["dur"]
        plan[i] = (extra, acc.get(key, 0.0), key)
        acc[key] = acc.get(key, 0.0) + extra
    return plan, acc


def shift_event(e: dict, off_t: float, off_id: int) -> dict:
    """A copy of event ``e`` moved ``off_t`` µs later, its flow ``id``, ``correlation`` and
    ``External id`` offset by ``off_id`` (so links stay valid between back-to-back copies).
    Also used by benchmarks/bench_analyze.py to build its large trace."""
    e2 = dict(e)
    if isinstance(e2.get("ts"), (int, float)):
        e2["ts"] = round(e2["ts"] + off_t, 3)
    if "id" in e2 and isinstance(e2["id"], int):
        e2["id"] += off_id
    a = e2.get("args")
    if isinstance(a, dict):
        a = dict(a)
        for key in ("correlation", "External id"):
            if isinstance(a.get(key), int):
                a[key] += off_id
        e2["args"] = a
    return e2


def _shifted(events, off_t: float, off_id: int, scale: float, plan, carried: dict):
    for i, e in enumerate(events):
        e2 = shift_event(e, off_t, off_id)
        p = plan.get(i)
        if p is not None and scale != 1.0:
            extra, before, key = p
            e2["ts"] = round(e2["ts"] + carried.get(key, 0.0) + before, 3)
            e2["dur"] = round(e2["dur"] + extra, 3)
        yield e2


def comm_fields(rank: int, ranks: int, i: int) -> dict:
    return {
        "Collective name": "allreduce",
        "dtype": "BFloat16",
        "In msg nelems": NELEMS,
        "Out msg nelems": NELEMS,
        "In split size": "[]",
        "Out split size": "[]",
        "Global rank start": 0,
        "Global rank stride": 1,
        "Group size": ranks,
        "Process Group Name": "0",
        "Process Group Description": "default_pg",
        "Process Group Ranks": json.dumps(list(range(ranks))),
        "Rank": rank,
        "Seq": i + 1,
    }


def collective_events(
    rank: int, ranks: int, n: int, t0: float, t1: float, cpu_pid, gpu_pid, device: int = 0
) -> list[dict]:
    out = []
    for i in range(n):
        base = t0 + (i + 0.5) * (t1 - t0) / n
        arrive = base + arrival_us(rank, i)
        end = base + max(arrival_us(r, i) for r in range(ranks)) + 20.0 + KERNEL_US
        corr = CORR0 + i
        f = comm_fields(rank, ranks, i)
        out.append(
            {
                "ph": "X",
                "cat": "cpu_op",
                "name": "record_param_comms",
                "pid": cpu_pid,
                "tid": COMM_TID,
                "ts": round(arrive, 3),
                "dur": 30.0,
                "args": dict(f, **{"External id": corr, "Record function id": 0}),
            }
        )
        out.append(
            {
                "ph": "X",
                "cat": "cuda_runtime",
                "name": "cudaLaunchKernel",
                "pid": cpu_pid,
                "tid": COMM_TID,
                "ts": round(arrive + 5.0, 3),
                "dur": 10.0,
                "args": {"cbid": 211, "correlation": corr, "External id": corr},
            }
        )
        out.append(
            {
                "ph": "X",
                "cat": "kernel",
                "name": "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
                "pid": gpu_pid,
                "tid": COMM_STREAM,
                "ts": round(arrive + 20.0, 3),
                "dur": round(end - (arrive + 20.0), 3),
                "args": dict(f, **{"device": device, "stream": COMM_STREAM, "correlation": corr, "External id": corr}),
            }
        )
    return out


def _dumps(value) -> bytes:
    """One JSON value in UTF-8: orjson, the values json.dumps writes without its spaces (no NaN
    reaches it: orjson.loads refuses one in the source); the four ranks of the H100 trace (the
    suite's) in 1.0 CPU s, 1.8 with json."""
    return orjson.dumps(value)


def make_rank_traces(
    source, out_dir, ranks: int = 4, *, copies: int = 1, collectives: int = 8, gz: bool = True
) -> list[Path]:
    doc = orjson.loads(gzip.open(source).read() if str(source).endswith(".gz") else Path(source).read_bytes())
    events = doc.pop("traceEvents")
    ts = [e["ts"] for e in events if e.get("ph") == "X" and isinstance(e.get("ts"), (int, float))]
    t_min, t_max = min(ts), max(ts)
    span = t_max - t_min + 1000.0
    cpu_pid = next(e["pid"] for e in events if e.get("cat") == "cpu_op")
    gpu_pid = next(e["pid"] for e in events if e.get("cat") == "kernel")
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = []
    for r in range(ranks):
        meta = dict(doc)
        meta["distributedInfo"] = {
            "backend": "nccl",
            "rank": r,
            "world_size": ranks,
            "pg_count": 1,
            "nccl_version": "2.21.5",
        }
        p = out_dir / (f"rank{r}.json.gz" if gz else f"rank{r}.json")
        opener = (lambda q: gzip.open(q, "wb", compresslevel=1)) if gz else (lambda q: open(q, "wb"))
        with opener(p) as f:
            f.write(b"{\n")
            for k, v in meta.items():
                f.write(b"  " + _dumps(k) + b": " + _dumps(v) + b",\n")
            f.write(b'  "traceEvents": [\n')
            first = True
            scale = 1.0 + 0.05 * r
            plan, per_copy = _stretch_plan(events, scale)
            carried: dict = {}  # extra µs of the earlier copies, per stream
            for c in range(copies):
                for e in _shifted(events, c * span, c * 10**7, scale, plan, carried):
                    f.write((b"" if first else b",\n") + b"    " + _dumps(e))
                    first = False
                for k, v in per_copy.items():
                    carried[k] = carried.get(k, 0.0) + v
            for e in collective_events(r, ranks, collectives, t_min, t_min + copies * span - 1000.0, cpu_pid, gpu_pid):
                f.write(b",\n    " + _dumps(e))
            f.write(b"\n  ]\n}\n")
        paths.append(p)
    return paths


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("source")
    ap.add_argument("out_dir")
    ap.add_argument("--ranks", type=int, default=4)
    ap.add_argument("--copies", type=int, default=1)
    ap.add_argument("--collectives", type=int, default=8)
    ap.add_argument("--no-gzip", action="store_true")
    a = ap.parse_args()
    for p in make_rank_traces(
        a.source, a.out_dir, a.ranks, copies=a.copies, collectives=a.collectives, gz=not a.no_gzip
    ):
        print(p)


if __name__ == "__main__":
    main()
