"""scripts/capture_graph_fixtures.py (its ``sglang::store_cache`` stand-in registered through
scripts/stand_in_library.py) re-captured into tmp_path: the SGLang capture loop, the per-size
capture files and the replay step have the forwards, launches and kernels its docstring says.

Sizes (module constants): capture_bs [4, 8, 16] run largest first, 3 forwards each (2 warm-ups
and the captured one), 2 layers; a forward launches 1 (index_select) + 2 × (3 q/k/v mm +
store_cache + o mm + add) + 1 (LM head mm) = 14 kernels.
"""

from __future__ import annotations

from tests.scripts.kit import load

PER_FORWARD = 1 + 2 * (3 + 1 + 1 + 1) + 1


def _count(trace: dict, name: str) -> int:
    return sum(1 for e in trace["traceEvents"] if e.get("name") == name)


def test_the_capture_loop_runs_each_size_three_times_largest_first(captured):
    t = load(captured / "sglang_tiny_capture" / "capture.json.gz")
    ids = [e["args"]["Input Dims"][1] for e in t["traceEvents"] if e.get("name") == "aten::embedding"]
    assert ids == [[16]] * 3 + [[8]] * 3 + [[4]] * 3
    assert _count(t, "sglang::store_cache") == 9 * 2  # 9 forwards × 2 layers
    assert _count(t, "hipLaunchKernel") == 9 * PER_FORWARD  # 126
    # only the 6 warm-ups run: the captured forwards' launches get no kernel
    assert sum(1 for e in t["traceEvents"] if e.get("cat") == "kernel") == 6 * PER_FORWARD
    assert _count(t, "hipStreamBeginCapture") == _count(t, "hipStreamEndCapture") == 3


def test_store_cache_records_sglang_s_keyword_arguments(captured):
    t = load(captured / "sglang_tiny_capture" / "capture.json.gz")
    e = next(e for e in t["traceEvents"] if e.get("name") == "sglang::store_cache")
    # k/v [bs, KV = 2 heads × 16], caches [SLOTS 64, 32]; row_bytes 32 × 2 bytes, size_limit 64
    assert e["args"]["Input Dims"][:5] == [[16, 32], [16, 32], [64, 32], [64, 32], [16]]
    assert e["args"]["Concrete Inputs"][5:] == ["64", "0", "64"]


def test_each_per_size_file_holds_only_its_captured_forward(captured):
    for bs in (4, 8, 16):
        t = load(captured / "sglang_tiny_capture_per_bs" / f"DecodeCudaGraphRunner_bs_{bs}_rank0.json.gz")
        ids = [e["args"]["Input Dims"][1] for e in t["traceEvents"] if e.get("name") == "aten::embedding"]
        assert ids == [[bs]]
        assert _count(t, "hipLaunchKernel") == PER_FORWARD
        assert not any(e.get("cat") == "kernel" for e in t["traceEvents"])


def test_the_replay_step_owns_the_graph_s_kernels(captured):
    t = load(captured / "sglang_tiny_graph.json.gz")
    (launch,) = [e for e in t["traceEvents"] if e.get("name") == "hipGraphLaunch"]
    owned = [
        e
        for e in t["traceEvents"]
        if e.get("cat") == "kernel" and e["args"]["correlation"] == launch["args"]["correlation"]
    ]
    assert len(owned) == PER_FORWARD
    assert _count(t, "step[DECODE bs=5]") == 1
