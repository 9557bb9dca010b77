"""Helpers shared by the tests of scripts/capture_*_fixtures.py: what each script writes, and
reading a written trace (cpu_ops, one op, the content without timestamps)."""

from __future__ import annotations

import functools
import gzip
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# script -> the files it writes under --out
WRITES = {
    "capture_attention_fixtures.py": ["inference_attention_ops.json.gz"],
    "capture_flashinfer_flashmla_fixtures.py": ["flashinfer_flashmla_ops.json.gz"],
    "capture_inference_fixtures.py": [
        "inference_rocm_paged_attention.json.gz",
        "inference_aiter_paged_attention_v1.json.gz",
    ],
    "capture_graph_fixtures.py": [
        "sglang_tiny_capture/capture.json.gz",
        *(f"sglang_tiny_capture_per_bs/DecodeCudaGraphRunner_bs_{bs}_rank0.json.gz" for bs in (4, 8, 16)),
        "sglang_tiny_graph.json.gz",
    ],
    "capture_moe_ep_fixtures.py": ["serving_moe_ep.json.gz"],
    "capture_idle_fixtures.py": ["idle_launch_steps.json.gz"],
    "capture_serving_fixtures.py": [
        f"serving_{fam}.json.gz" for fam in ("inductor", "kv_cache", "moe", "quant", "vision")
    ],
}


@functools.lru_cache(maxsize=None)
def load(path: Path) -> dict:
    """The trace at ``path``, parsed once per process (the files are written once, by the session's
    ``captured`` fixture, or committed): callers read it and must not change it."""
    with gzip.open(path) as f:
        return json.load(f)


def cpu_ops(path: Path) -> list[dict]:
    return [e for e in load(path)["traceEvents"] if e.get("cat") == "cpu_op"]


def op(ops: list[dict], name: str, i: int = 0) -> dict:
    hits = [e for e in ops if e["name"] == name]
    assert len(hits) > i, f"{name}: {len(hits)} in the trace, wanted occurrence {i}"
    return hits[i]


def structure(ops: list[dict]) -> list[tuple]:
    """A capture's content, timestamps and ids left out."""
    return [
        (e["name"], e["args"].get("Input Dims"), e["args"].get("Input type"), e["args"].get("Concrete Inputs"))
        for e in ops
    ]


def annotation_of(trace: dict, e: dict) -> str:
    """The innermost ``user_annotation`` on ``e``'s thread enclosing the event ``e``."""
    inside = [
        a
        for a in trace["traceEvents"]
        if a.get("cat") == "user_annotation"
        and a["tid"] == e["tid"]
        and a["ts"] <= e["ts"]
        and e["ts"] + e["dur"] <= a["ts"] + a["dur"]
    ]
    assert inside, f"{e['name']} runs under no annotation"
    return min(inside, key=lambda a: a["dur"])["name"]


def scheduled_tokens(annotation: str) -> int:
    """T of a vLLM detailed annotation ``execute_<T>_context_...``."""
    return int(annotation.split("_")[1])
