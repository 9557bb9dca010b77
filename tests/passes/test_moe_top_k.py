"""Pass "MoE top-k": k from the [T, k] routing tensors around a MoE op, and the refusals left.

Issue 19: a MoE op whose trace holds [T, k] top-k buffers was refused for "top-k unknown"
(only TopK's Concrete Inputs[1] and topk_softmax outputs *under* vllm::moe_forward were read).
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from perfreport.errors import ModelError
from perfreport.models.moe import experts as moe
from perfreport.models.moe import vendor as mv
from perfreport.pipeline import load_tree
from tests.kit import X, shape_args, write_trace

FIX = Path(__file__).resolve().parents[2] / "fixtures"
CAPTURE = FIX / "vllm_decode_capture" / "graph_capture_rank_0.1773709742341309550.pt.trace.json.gz"
BF16, F32, I32 = "c10::BFloat16", "float", "int"


def _without_concrete_inputs(src: Path, dst: Path) -> str:
    """The trace as a profiler with Concrete Inputs off records it (shapes and types only)."""
    d = json.loads(gzip.open(src, "rt").read())
    for e in d["traceEvents"]:
        (e.get("args") or {}).pop("Concrete Inputs", None)
    dst.write_text(json.dumps(d))
    return str(dst)


def test_real_vllm_capture_without_concrete_inputs_reads_sort_tokens(tmp_path):
    """The shared vLLM GPT-OSS decode capture (T 32, E 32, k 4): without Concrete Inputs TopK's
    k is gone, but SortTokens(expt_scal [32, 4], expt_indx [32, 4], ...) under each
    vllm::moe_forward still shows it. Before: 'top-k unknown' on all 24 MoE rows."""
    tree = load_tree(_without_concrete_inputs(CAPTURE, tmp_path / "capture.json"))
    ops = tree.ops_named("vllm::moe_forward")
    assert len(ops) == 24
    for op in ops:
        assert op.perf_meta["moe_top_k"] == 4
        assert op.perf_meta["moe_top_k_source"] == "SortTokens [T, k] argument 0 (under the op)"
    m = moe.VllmMoeForward(ops[0])
    # the same figure as with TopK's k (tests/models/moe/test_experts.py): 2·32·4·(3072·5888 + 2944·3072)
    assert (m.k, m.flops()) == (4, 6_945_767_424)
    assert m.params()["top_k_from"].startswith("SortTokens")


def test_real_capture_with_concrete_inputs_agrees():
    tree = load_tree(str(CAPTURE))
    op = tree.ops_named("vllm::moe_forward")[0]
    # TopK (int argument 1 = '4') and SortTokens ([32, 4]) agree: the first read names it
    assert (op.perf_meta["moe_top_k"], op.perf_meta["moe_top_k_source"]) == (4, "TopK argument 1 (under the op)")


def _layer(tmp_path, routing, n_moe=1, t=6, e=8):
    """A parent cpu_op holding, in order, the given routing ops then ``n_moe`` moe_forward
    ops (hidden_states [t, 64], router_logits [t, e], layer_name), each 10 µs long."""
    evs = [X("cpu_op", "model_forward", 0, 1000)]
    ts = 10
    for name, dims, types in routing:
        evs.append(X("cpu_op", name, ts, 5, **shape_args(dims, types)))
        ts += 10
    for _ in range(n_moe):
        evs.append(X("cpu_op", "vllm::moe_forward", ts, 5, **shape_args([[t, 64], [t, e], []], [BF16, BF16, ""])))
        ts += 10
    return load_tree(write_trace(tmp_path, evs)).ops_named("vllm::moe_forward")


TOPK_SOFTMAX = ("_moe_C::topk_softmax", [[6, 2], [6, 2], [6, 2], [6, 8], []], [F32, I32, I32, BF16, "Scalar"])


def test_sibling_topk_softmax_before_the_op(tmp_path):
    # _moe_C::topk_softmax(topk_weights [6, 2], topk_indices, token_expert_indices, gating [6, 8])
    # routes outside the experts op; the next moe_forward (another layer) has no routing of its
    # own since the previous moe_forward, so k stays unknown there: no guess from layer 1.
    first, second = _layer(tmp_path, [TOPK_SOFTMAX], n_moe=2)
    assert first.perf_meta["moe_top_k"] == 2
    assert first.perf_meta["moe_top_k_source"] == (
        "_moe_C::topk_softmax [T, k] argument 0 (before it under the same parent)"
    )
    assert "moe_top_k" not in second.perf_meta
    with pytest.raises(ModelError, match=r"top-k unknown: no routing op .* no \[6, k\] tensor"):
        moe.VllmMoeForward(second)


def test_other_tokens_and_disagreement_are_refused(tmp_path):
    # a [5, 2] routing tensor belongs to another batch (T 6 here): not read
    other_t = (
        "_moe_C::moe_align_block_size",
        [[5, 2], [], [], [16], [4], [1]],
        [I32, "Scalar", "Scalar", I32, I32, I32],
    )
    (op,) = _layer(tmp_path, [other_t])
    assert "moe_top_k" not in op.perf_meta
    # two routing ops for the same T that disagree (k 2 and 3): no figure, both named
    three = ("aiter::moe_sorting_fwd", [[6, 3], [6, 3]], [I32, F32])
    (op,) = _layer(tmp_path, [TOPK_SOFTMAX, three])
    assert "moe_top_k" not in op.perf_meta
    with pytest.raises(ModelError, match=r"disagree: 2 from _moe_C::topk_softmax .*, 3 from aiter::moe_sorting_fwd"):
        moe.VllmMoeForward(op)


def test_aiter_ck_stages_read_k_from_their_t_k_buffers(tmp_path):
    """fixtures/serving_moe.json.gz without Concrete Inputs: ck_moe_stage1's out [6, 2, 96] and
    ck_moe_stage2's inter_states [6, 2, 96] show k = 2 (before: 'topk (argument 7) not
    recorded'); the FLOPs are the recorded-topk ones (tests/models/moe/test_experts.py)."""
    tree = load_tree(_without_concrete_inputs(FIX / "serving_moe.json.gz", tmp_path / "moe.json"))
    (s1,), (s2,) = tree.ops_named("aiter::ck_moe_stage1"), tree.ops_named("aiter::ck_moe_stage2")
    m1, m2 = mv.AiterCkMoeStage(s1), mv.AiterCkMoeStage(s2)
    assert (m1.k, m2.k) == (2, 2)
    # stage 1: 2·T·k·H·2I = 2·6·2·64·192 = 294,912; stage 2: 2·6·2·96·64 = 147,456
    assert (m1.flops(), m2.flops()) == (294_912, 147_456)
    assert m1.params()["top_k_from"] == "argument 6 [T, k, *] (topk argument 7 not recorded)"
    # aiter::fmoe_g1u1 takes no [T, k] tensor and no routing op precedes it in that trace:
    # k truly is not there, and the row is still refused
    (f,) = tree.ops_named("aiter::fmoe_g1u1")
    with pytest.raises(ModelError, match=r"top-k unknown: topk \(argument 8\) not recorded; no routing op"):
        mv.AiterFmoe(f)


def test_aiter_fmoe_after_its_moe_sorting(tmp_path):
    # aiter's fused_moe: moe_sorting_fwd(topk_ids [6, 2], topk_weights, ...) then fmoe_g1u1(out,
    # input [6, 64], gate, down, sorted ids..., topk) without Concrete Inputs, in one parent
    fmoe_dims = [[6, 64], [6, 64], [8, 192, 64], [8, 64, 96], [24], [12], [6], [1], []]
    fmoe_types = [BF16, BF16, BF16, BF16, I32, F32, I32, I32, "Scalar"]
    evs = [
        X("cpu_op", "aiter::fused_moe_wrapper", 0, 100),
        X(
            "cpu_op",
            "aiter::moe_sorting_fwd",
            10,
            5,
            **shape_args([[6, 2], [6, 2], [24], [12], [6], [1]], [I32, F32] + [I32] * 4),
        ),
        X("cpu_op", "aiter::fmoe_g1u1", 20, 5, **shape_args(fmoe_dims, fmoe_types)),
    ]
    (op,) = load_tree(write_trace(tmp_path, evs)).ops_named("aiter::fmoe_g1u1")
    m = mv.AiterFmoe(op)
    # 2·T·k·(H·2I + I·H) = 2·6·2·(64·192 + 96·64) = 442,368
    assert (m.k, m.flops()) == (2, 442_368)
    assert m.params()["top_k_from"].startswith("aiter::moe_sorting_fwd [T, k] argument 0 (before it")


def test_fused_experts_topk_ids_win_and_grouped_topk_is_not_routing(tmp_path):
    """DeepSeek-style routing under vllm::moe_forward (T 6, E 8): aten::topk of the [6, 4]
    group scores (k 2 groups) is not the router's (not the op's [6, 8] logits); aten::topk of
    the logits gives k 2; the fused-experts child runs topk_ids [6, 3] (a shared expert fused as
    an extra column): its 3 wins, and the row names the router's 2."""
    fused = [[6, 64], [9, 192, 64], [9, 64, 96], [6, 3], [6, 3]]
    evs = [
        X("cpu_op", "vllm::moe_forward", 0, 100, **shape_args([[6, 64], [6, 8], []], [BF16, BF16, ""])),
        X(
            "cpu_op",
            "aten::topk",
            10,
            5,
            **shape_args([[6, 4], [], [], [], []], [F32] + ["Scalar"] * 4, ["", "2", "-1", "True", "False"]),
        ),
        X(
            "cpu_op",
            "aten::topk",
            20,
            5,
            **shape_args([[6, 8], [], [], [], []], [F32] + ["Scalar"] * 4, ["", "2", "-1", "True", "False"]),
        ),
        X("cpu_op", "vllm::outplace_fused_experts", 30, 5, **shape_args(fused, [BF16, BF16, BF16, F32, I32])),
    ]
    (op,) = load_tree(write_trace(tmp_path, evs)).ops_named("vllm::moe_forward")
    assert op.perf_meta["moe_top_k"] == 3
    assert op.perf_meta["moe_top_k_source"] == (
        "vllm::outplace_fused_experts [T, k] argument 4 (under the op); routing ops show 2 (aten::topk argument 1)"
    )
