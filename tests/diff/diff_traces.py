from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

FIX = Path(__file__).resolve().parents[2] / "fixtures"
H100 = FIX / "h100_qwen_0.5b.json.gz"
SLOW_OP = ("aten::mm", [[8944, 1024], [1024, 2816]])


def slowed_copy(src: Path, dst: Path, op_name: str, dims, factor: float = 2.0) -> int:
    """Copy ``src`` with every GPU event launched inside ``op_name`` ops with these Input Dims
    ``factor`` times longer; returns how many GPU events were changed."""
    with gzip.open(src, "rt") as fh:
        doc = json.load(fh)
    evs = doc["traceEvents"]
    spans = [
        (e["pid"], e["tid"], e["ts"], e["ts"] + e["dur"])
        for e in evs
        if e.get("ph") == "X"
        and e.get("cat") == "cpu_op"
        and e.get("name") == op_name
        and (e.get("args") or {}).get("Input Dims") == dims
    ]
    corr = {
        e["args"]["correlation"]
        for e in evs
        if e.get("ph") == "X"
        and e.get("cat") in ("cuda_runtime", "cuda_driver")
        and any(p == e["pid"] and t == e["tid"] and a <= e["ts"] <= b for p, t, a, b in spans)
    }
    gpu = [e for e in evs if e.get("ph") == "X" and e.get("cat") in ("kernel", "gpu_memset", "gpu_memcpy")]
    # stretch the op's events and push the later events of the same stream back by as much,
    # as a slower kernel would: no stream runs two kernels at once by this stretch (events
    # that overlap on one stream count once in the op tables)
    added: dict = {}  # (device, stream) -> [(original end, extra µs)]
    n = 0
    for e in sorted(gpu, key=lambda e: e["ts"]):
        a = e.get("args") or {}
        key = (a.get("device"), a.get("stream"))
        shift = sum(x for end, x in added.get(key, ()) if end <= e["ts"])
        end = e["ts"] + e["dur"]
        if a.get("correlation") in corr:
            extra = e["dur"] * (factor - 1.0)
            e["dur"] = e["dur"] * factor
            added.setdefault(key, []).append((end, extra))
            n += 1
        e["ts"] = e["ts"] + shift
    with gzip.open(dst, "wt") as fh:
        json.dump(doc, fh)
    return n


@pytest.fixture(scope="session")
def slowed_trace(tmp_path_factory) -> Path:
    dst = tmp_path_factory.mktemp("diff") / "h100_mm_slowed.json.gz"
    assert slowed_copy(H100, dst, *SLOW_OP) > 0
    return dst
