"""Sliding-window layers and varlen/paged prefill ops of InferenceAttention, by hand."""

from __future__ import annotations

from pathlib import Path

import pytest

from perfreport.models.attention.prefill import AiterFmhaV3VarlenFwd, AiterMhaBatchPrefill, AiterMhaVarlenFwd
from perfreport.models.base import bounds
from perfreport.models.attention.engine_ops import VllmUnifiedAttention
from perfreport.stats.iteration_formats import parse_iteration
from tests.kit import cpu_op

BF16 = "c10::BFloat16"
FIX = Path(__file__).resolve().parents[3] / "fixtures"
DECODE = "execute_32_context_0(sq0sk0sqsq0sqsk0)_generation_32(sq32sk55086sqsq32sqsk55086)"


def _op(name, dims, types, ann, concrete=None, meta=None):
    return cpu_op(name, dims, types, concrete, {"iteration": parse_iteration(ann), **(meta or {})})


def _unified(meta):
    dims = [[32, 64, 64], [32, 8, 64], [32, 8, 64], [32, 64, 64], [], [], [], [0]]
    return VllmUnifiedAttention(
        _op("vllm::unified_attention_with_output", dims, [BF16] * 4 + ["", "", "", BF16], DECODE, meta=meta)
    )


def test_gpt_oss_sliding_layer_by_hand():
    # gpt-oss-20b decode step: H_Q 64, H_KV 8, d 64, 32 requests, 55,086 KV tokens, W 128.
    m = _unified({"layer_index": 0, "sliding_window": 128})
    # keys read = min(55086, 32 + 32*127) = 4096; pairs = min(55086, 32*128) = 4096
    # FLOPs = 2*64*(64 + 64)*4096 = 67,108,864
    assert m.flops() == 67_108_864
    # new tokens: Q/O 32*(64*64 + 64*64) = 262,144 + their K/V 32*8*64*2 = 32,768 elements
    # cached: (4096 - 32)*8*128 = 4,161,536 elements; (294,912 + 4,161,536)*2 = 8,912,896 B
    t = m.byte_terms()
    assert t["gen_elems_q"] + t["gen_elems_o"] + t["gen_elems_new_kv"] == 294_912
    assert m.byte_terms()["gen_elems_kv"] == 4_161_536
    assert m.bytes() == 8_912_896
    assert m.params()["sliding_window"] == 128 and m.params()["N_KV"] == 4096
    (a,) = m.assumptions()
    assert "sliding window 128 (model config, layer 0)" in a.text and "159 … 4096" in a.text
    # lower bound: 159 keys -> cached (159 - 32)*8*128 = 130,048 elements
    assert a.bytes_min == (294_912 + 130_048) * 2 and a.bytes_max == 8_912_896
    assert a.flops_min == 2 * 64 * 128 * 159
    f_lo, f_hi, b_lo, b_hi = bounds(m, m.flops(), m.bytes())
    assert (b_lo, b_hi) == (a.bytes_min, 8_912_896) and f_hi == 67_108_864


def test_full_layer_and_config_full_attention_are_unchanged():
    full = _unified({"layer_index": 1, "sliding_window": 0})
    plain = _unified(None)
    # FLOPs = 2*64*128*55086; bytes = (294,912 + (55086 - 32)*1024)*2
    assert full.flops() == plain.flops() == 2 * 64 * 128 * 55086
    assert full.bytes() == plain.bytes() == (294_912 + 55054 * 1024) * 2
    assert full.assumptions() == [] and "sliding_window" not in full.params()


PREFILL = "execute_300_context_2(sq300sk500sqsq45000sqsk75000)_generation_0(sq0sk0sqsq0sqsk0)"


def test_aiter_mha_varlen_fwd_on_chunk_statistics():
    # two prefill chunks of 150 on 100 cached each (sk 250): sqsq 2*150^2, sqsk 2*150*250
    # q [300, 16, 128], k/v [500, 2, 128]; window_size_left -1 (arg 13): full attention
    dims = [[300, 16, 128], [500, 2, 128], [500, 2, 128], [3], [3]] + [[]] * 10
    ci = [""] * 13 + ["-1", "-1"]
    m = AiterMhaVarlenFwd(
        _op("aiter::mha_varlen_fwd", dims, [BF16] * 3 + ["int"] * 2 + [""] * 10, PREFILL, concrete=ci)
    )
    # pairs = 75000 - 45000/2 = 52500; FLOPs = 2*16*(128 + 128)*52500 = 430,080,000
    assert m.flops() == 430_080_000
    # new: 300*(16*128*2 + 2*128*2) = 300*4608 = 1,382,400; cached (500-300)*2*256 = 102,400
    assert m.bytes() == (1_382_400 + 102_400) * 2
    assert m.window is None and m.precision() == "bf16"


def test_aiter_fmha_v3_varlen_fwd_window_from_its_argument():
    # fmha_v3_varlen_fwd keeps mha_varlen_fwd's order up to window_size_left (arg 13):
    # 63 -> W = 64 keys; same step and shapes as the mha_varlen_fwd test above.
    dims = [[300, 16, 128], [500, 2, 128], [500, 2, 128], [3], [3]] + [[]] * 10
    ci = [""] * 13 + ["63", "0"]
    m = AiterFmhaV3VarlenFwd(
        _op("aiter::fmha_v3_varlen_fwd", dims, [BF16] * 3 + ["int"] * 2 + [""] * 10, PREFILL, concrete=ci)
    )
    assert m.window == 64
    # pairs = min(52500, 300*64) = 19200 -> FLOPs 2*16*256*19200 = 157,286,400
    assert m.flops() == 157_286_400
    # keys = min(500, 300 + 2*63) = 426 -> cached (426 - 300)*512 = 64,512 elements
    assert m.bytes() == (1_382_400 + 64_512) * 2


def test_aiter_mha_batch_prefill_window_from_its_argument():
    # same step, 5D paged caches: K [blocks, 2, 128/8, 16, 8], V [blocks, 2, 16/8, 128, 8],
    # window_size_left 63 (arg 13) -> W = 64 keys
    dims = [[300, 16, 128], [40, 2, 16, 16, 8], [40, 2, 2, 128, 8], [3], [3], [32]] + [[]] * 9
    ci = [""] * 13 + ["63", "0"]
    m = AiterMhaBatchPrefill(
        _op("aiter::mha_batch_prefill", dims, [BF16] * 3 + ["int"] * 3 + [""] * 9, PREFILL, concrete=ci)
    )
    assert (m.H_KV, m.d_h_qk, m.d_h_v, m.kv_layout) == (2, 128, 128, "5D")
    assert m.window == 64 and "op argument 13" in m.window_source
    # pairs = min(52500, 300*64) = 19200 -> FLOPs 2*16*256*19200 = 157,286,400
    assert m.flops() == 157_286_400
    # keys = min(500, 300 + 2*63) = 426 -> cached (426 - 300)*512 = 64,512 elements
    assert m.bytes() == (1_382_400 + 64_512) * 2


def test_vllm_decode_trace_with_gpt_oss_config_stays_under_roofline():
    """Proof bullet: no attention row exceeds 100% of roofline once --model-config gives the
    layer types (gpt-oss-20b: even layers sliding 128, odd full; 24 layers)."""
    from perfreport.pipeline import analyze

    rep = analyze(
        str(FIX / "vllm_decode_graph.json.gz"),
        graph_capture=str(FIX / "vllm_decode_capture"),
        model_config=str(FIX / "gpt_oss_20b_config.json"),
    )
    rows = rep.sheet("InferenceAttention_fwd").records()
    assert sum(r["count"] for r in rows) == 24
    by_window = {r.get("param: sliding_window"): r for r in rows}
    assert by_window[128]["count"] == 12 and by_window[None]["count"] == 12
    assert by_window[128]["GFLOP"] == pytest.approx(0.067108864)
    for r in rows:
        assert r["roofline max (%)"] <= 100.0, r
