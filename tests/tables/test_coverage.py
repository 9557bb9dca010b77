"""Roofline coverage over every serving trace in ../shared/traces/inference/ and fixtures/.

A serving trace is one with GPU events and a vLLM/SGLang iteration annotation. On each:

* with shapes (eager, or a graph replay given its capture trace): >= 90% of GPU time is in
  rows with a roofline (the vLLM decode trace was at 23% before the MoE and KV-cache models);
* a graph replay without its capture trace: the graph's kernels form a row under the graph
  launch whose reason says "graph replay without a capture trace: shapes unknown", and the
  unified sheet's coverage note says so too (the SGLang decode trace: 0.6% coverage).

Capture traces are found by layout: ``capture_traces/`` beside a shared trace, or
``fixtures/<name>_capture/`` for ``fixtures/<name>_graph.json.gz``. A ``fixtures/*_config.json``
named in CONFIGS is passed as ``--model-config``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from perfreport.events import USER_ANNOTATION
from perfreport.pipeline import load_tree
from perfreport.stats.iteration_formats import parse_iteration
from perfreport.tables.coverage import GRAPH_CATEGORY, NO_CAPTURE
from tests.kit.cached import analyzed

ROOT = Path(__file__).resolve().parents[2]
# ../shared beside the checkout (/work/main), or beside the worktrees' folder (/work/wt/<name>)
SHARED = next(
    (
        p
        for p in (
            ROOT.parent / "shared" / "traces" / "inference",
            ROOT.parent.parent / "shared" / "traces" / "inference",
        )
        if p.is_dir()
    ),
    ROOT.parent / "shared" / "traces" / "inference",
)
FIX = ROOT / "fixtures"
# model family of a trace (identified from its shapes: H 2880, 64/8 heads, 32 experts, 24 layers)
CONFIGS = {"vllm_decode": FIX / "gpt_oss_20b_config.json"}


def _traces() -> list[Path]:
    out = sorted(FIX.glob("*.json.gz"))
    if SHARED.is_dir():
        out += sorted(SHARED.glob("*/*.json.gz"))
    return out


def _capture(trace: Path) -> Path | None:
    beside = trace.parent / "capture_traces"
    if beside.is_dir():
        return beside
    if trace.name.endswith("_graph.json.gz"):
        d = trace.parent / (trace.name[: -len("_graph.json.gz")] + "_capture")
        if d.is_dir():
            return d
    return None


def _config(trace: Path) -> Path | None:
    key = "vllm_decode" if ("vllm_decode" in trace.name or "vllm_decode" in str(trace.parent)) else None
    return CONFIGS.get(key)


def _serving(trace: Path) -> bool:
    t = load_tree(str(trace), passes=False)
    return bool(t.gpu) and any(o.cat == USER_ANNOTATION and parse_iteration(o.name) is not None for o in t.ops)


SERVING = [t for t in _traces() if _serving(t)]


def _coverage(rows) -> float:
    total = sum(r["time sum (µs)"] for r in rows)
    return 100.0 * sum(r["time sum (µs)"] for r in rows if r.get("roofline time (µs)") is not None) / total


def _statement(report) -> str:
    return " ".join(report.coverage.lines())


def test_the_serving_traces_are_found():
    names = {t.name for t in SERVING}
    assert {"vllm_decode_graph.json.gz", "sglang_decode.json.gz"} <= names
    if SHARED.is_dir():
        assert {"graph_execution.json.gz", "sglang_Qwen3-8B_decode.json.gz"} <= names


@pytest.mark.parametrize("trace", SERVING, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_serving_trace_coverage(trace):
    cap, cfg = _capture(trace), _config(trace)
    rep = analyzed(str(trace), graph_capture=str(cap) if cap else None, model_config=str(cfg) if cfg else None)
    rows = rep.sheet("unified_perf_summary").records()
    graph_rows = [r for r in rows if r["category"] == GRAPH_CATEGORY]
    cov = _coverage(rows)
    assert rep.coverage.modelled_pct == pytest.approx(cov)  # modelled = rows with a roofline
    assert f"modelled {cov:.1f}%" in _statement(rep)
    if cap is None and graph_rows:
        # shapes unknown: the rows and the coverage statement say why
        assert all(r["reason"] == NO_CAPTURE for r in graph_rows)
        assert all(r["name"].endswith("GraphLaunch") and r["kernels"] for r in graph_rows)
        assert "graph replay without shapes" in _statement(rep)
        assert "give --graph-capture" in _statement(rep)
        graph_share = 100.0 * sum(r["time sum (µs)"] for r in graph_rows) / sum(r["time sum (µs)"] for r in rows)
        assert graph_share > 90.0  # the replay is nearly all of these decode steps
    else:
        assert not graph_rows
        assert cov >= 90.0, [(r["name"], r["percent (%)"]) for r in rows if r.get("roofline time (µs)") is None][:10]


def test_graph_replay_without_capture_is_one_row_per_launch_not_the_annotation():
    rep = analyzed(str(FIX / "vllm_decode_graph.json.gz"))
    rows = rep.sheet("unified_perf_summary").records()
    (g,) = [r for r in rows if r["category"] == GRAPH_CATEGORY]
    assert g["name"] == "hipGraphLaunch" and g["reason"] == NO_CAPTURE
    # the 421 graph kernels of the launch (NOTES: one correlation owns 421 kernels)
    assert sum(int(part.split(" x")[1].split(",")[0]) for part in g["kernels"].split("; ")) == 421


def test_trace_without_shapes_says_so_not_model_error(tmp_path):
    # a GEMM recorded without record_shapes: no Input Dims at all -> its own reason, not
    # "model error" (which would send the user looking for a model bug)
    import io
    import json

    from perfreport.pipeline import load_tree
    from perfreport.specs import load_arch
    from perfreport.tables import build_tables

    ev = [
        {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 0, "dur": 50, "args": {}},
        {
            "ph": "X",
            "cat": "cuda_runtime",
            "name": "cudaLaunchKernel",
            "pid": 1,
            "tid": 1,
            "ts": 10,
            "dur": 5,
            "args": {"correlation": 1},
        },
        {
            "ph": "X",
            "cat": "kernel",
            "name": "ampere_sgemm_128x64_nn",
            "pid": 0,
            "tid": 7,
            "ts": 100,
            "dur": 40,
            "args": {"device": 0, "stream": 7, "correlation": 1},
        },
    ]
    tree = load_tree(io.BytesIO(json.dumps({"traceEvents": ev}).encode()))
    sheets, cov = build_tables(tree, spec=load_arch("a100"))
    (r,) = (
        [x for x in sheets[0].records() if x["name"] == "aten::mm"]
        if sheets[0].name == "unified_perf_summary"
        else [x for s in sheets if s.name == "unified_perf_summary" for x in s.records() if x["name"] == "aten::mm"]
    )
    assert r["coverage"] == "no shapes recorded (record_shapes was off)"
    assert cov.unmodelled_us == {"no shapes recorded (record_shapes was off)": 40.0} and not cov.model_errors
