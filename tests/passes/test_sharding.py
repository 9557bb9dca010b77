"""Pass "sharding": the tensor-parallel degree from the trace's head counts against --model-config."""

from __future__ import annotations

import json

from perfreport.models.moe.experts import VllmMoeForward
from perfreport.passes import PASSES
from perfreport.passes.sharding import annotate_sharding
from perfreport.pipeline import analyze, load_tree
from perfreport.read.model_config import parse_model_config
from tests.tables.kit import X

BF16 = "c10::BFloat16"
ANN = "execute_32_context_0(sq0sk0sqsq0sqsk0)_generation_32(sq32sk32768sqsq32sqsk32768)"
# global sizes (gpt-oss-120b-like, unquantized here): 64 query heads, 8 KV heads, 128 experts
CONFIG = {
    "model_type": "gpt_oss",
    "hidden_size": 2880,
    "intermediate_size": 2880,
    "num_attention_heads": 64,
    "num_key_value_heads": 8,
    "head_dim": 64,
    "num_local_experts": 128,
    "num_experts_per_tok": 4,
    "num_hidden_layers": 1,
}


def _rank_trace(tmp_path, hq=8, hkv=1, name="rank.json"):
    """One decode step of a TP rank: attention with hq query / hkv KV heads, then the MoE."""
    q, kv = [32, hq, 64], [32, hkv, 64]
    ev = [
        X("user_annotation", ANN, 0.0, 100.0),
        X(
            "cpu_op",
            "vllm::unified_attention_with_output",
            1.0,
            10.0,
            **{"Input Dims": [q, kv, kv, q], "Input type": [BF16] * 4, "Concrete Inputs": [""] * 4},
        ),
        X(
            "cpu_op",
            "vllm::moe_forward",
            20.0,
            10.0,
            **{"Input Dims": [[32, 2880], [32, 128], []], "Input type": [BF16, BF16, ""], "Concrete Inputs": [""] * 3},
        ),
    ]
    p = tmp_path / name
    p.write_text(json.dumps({"traceEvents": ev}))
    return str(p)


def _tree(path, cfg=CONFIG):
    return load_tree(path, model_config=parse_model_config(cfg, "config.json"))


def test_declared_writes():
    (p,) = [p for p in PASSES if p.name == "sharding"]
    assert p.writes == ("sharding",) and p.fn is annotate_sharding


def test_tp8_rank_moe_uses_per_rank_intermediate(tmp_path):
    # 8 of 64 query heads -> TP 8; 8 KV heads / 8 = 1 per rank (checked). The config's expert
    # intermediate 2880 is split: 360 per rank. Gated bf16 expert bytes per rank:
    # (H·2I + I·H)·2 = (2880·720 + 360·2880)·2 = 6,220,800 (unsharded: 49,766,400, x8)
    tree = _tree(_rank_trace(tmp_path))
    (moe,) = tree.ops_named("vllm::moe_forward")
    assert moe.perf_meta["sharding"]["tp"] == 8
    m = VllmMoeForward(moe)
    assert (m.experts.I, m.experts.bytes_per_expert) == (360, 6_220_800)
    text = m.assumptions()[-1].text
    assert text.startswith("experts sharded by tensor parallelism 8: intermediate 2880/8 = 360 per rank")
    assert "8 of 64 query heads, 1 of 8 KV heads (vllm::unified_attention_with_output ×1)" in text
    # bytes: hidden 32·2880·2 in + out, router logits 32·128·2, D = 128·(1 − (1 − 4/128)^32) experts
    d = 128 * (1 - (1 - 4 / 128) ** 32)
    want = 2 * 184_320 + 8_192 + d * 6_220_800
    assert abs(m.bytes() - want) < 1e-6 * want
    assert tree.sharding == (
        "tensor parallelism 8 inferred from 8 of 64 query heads, 1 of 8 KV heads "
        "(vllm::unified_attention_with_output ×1)"
    )


def test_inferred_degree_reaches_the_notes(tmp_path):
    rep = analyze(_rank_trace(tmp_path), arch="h100", model_config=parse_model_config(CONFIG, "config.json"))
    assert any(n.startswith("tensor parallelism 8 inferred from 8 of 64 query heads") for n in rep.notes)


def test_single_rank_keeps_global_sizes(tmp_path):
    tree = _tree(_rank_trace(tmp_path, hq=64, hkv=8))
    (moe,) = tree.ops_named("vllm::moe_forward")
    m = VllmMoeForward(moe)
    assert moe.perf_meta["sharding"]["tp"] == 1 and m.experts.I == 2880
    assert not m.assumptions()[-1].text.startswith("experts sharded")


def test_inconsistent_heads_infer_nothing_and_say_why(tmp_path):
    # 8 query heads say TP 8, but 2 KV heads would be TP 4: no degree is taken
    tree = _tree(_rank_trace(tmp_path, hq=8, hkv=2))
    (moe,) = tree.ops_named("vllm::moe_forward")
    assert "sharding" not in moe.perf_meta
    assert tree.sharding.startswith("tensor parallelism not inferred (vllm::unified_attention_with_output: 2 KV heads")
    assert VllmMoeForward(moe).experts.I == 2880
    tree = _tree(_rank_trace(tmp_path, hq=7, hkv=1))
    assert "7 query heads do not divide the config's 64" in tree.sharding


def test_replicated_kv_head_when_tp_exceeds_kv_heads(tmp_path):
    # TP 16 on 8 KV heads: each rank keeps one (replicated) KV head
    tree = _tree(_rank_trace(tmp_path, hq=4, hkv=1))
    assert tree.ops_named("vllm::moe_forward")[0].perf_meta["sharding"]["tp"] == 16


def test_without_a_config_nothing_runs(tmp_path):
    tree = load_tree(_rank_trace(tmp_path))
    assert tree.sharding is None and "sharding" not in tree.ops_named("vllm::moe_forward")[0].perf_meta
