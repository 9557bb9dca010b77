"""Varlen / paged / MLA attention ops in a real torch.profiler capture, analyzed end to end.

fixtures/inference_attention_ops.json.gz is written by scripts/capture_attention_fixtures.py
(stand-in torch.library ops under aiter's names and argument order, CPU profiler with
record_shapes); each call sits in a vLLM iteration annotation that gives the chunk statistics.
Values below are worked by hand from the formulas in perfreport/models/attention/inference.py
(FLOPs = 2*H_Q*(d_qk + d_v)*(c_sqsk - c_sqsq/2 + g_sqsk); bytes = new-token elements at the
query dtype + cached K/V elements at the cache dtype).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.kit.cached import analyzed

FLASHINFER = (
    "batch_decode_with_kv_cache_dtype_q_bf16_dtype_kv_e4m3_dtype_o_bf16_"
    "dtype_idx_i32_head_dim_qk_64_head_dim_vo_64_posenc_0_use_swa_False_"
    "use_logits_cap_False::run"
)
FIX = Path(__file__).resolve().parents[3] / "fixtures" / "inference_attention_ops.json.gz"


@pytest.fixture(scope="module")
def rows():

    rep = analyzed(str(FIX))
    return {r["name"]: r for r in rep.sheet("InferenceAttention_fwd").records()}


def test_every_new_op_is_one_attention_row(rows):
    assert sorted(rows) == [
        "_C::cutlass_mla_decode",
        "aiter::fmha_v3_varlen_fwd",
        "aiter::mha_batch_prefill",
        "aiter::mha_varlen_fwd",
        "aiter::mla_decode_stage1_asm_fwd",
        "aiter::paged_attention_ragged",
        FLASHINFER,
    ]
    assert all(r["count"] == 1 for r in rows.values())


@pytest.mark.parametrize("name", ["aiter::mha_varlen_fwd", "aiter::fmha_v3_varlen_fwd"])
def test_varlen_prefill(rows, name):
    # 2 prefill requests of 16 and 8 tokens, no cache: c_sq 24, c_sk 24, c_sqsq 16^2+8^2 = 320,
    # c_sqsk 16*16 + 8*8 = 320. pairs = 320 - 320/2 = 160.
    # FLOPs = 2*8*(64+64)*160 = 327,680.
    # new-token elements = 24*(8*64 + 8*64 + 2*64 + 2*64) = 24*1280 = 30,720; cached 0
    # bytes (BF16) = 30,720*2 = 61,440. window_size_left = -1 (recorded) -> no window.
    r = rows[name]
    assert r["GFLOP"] == pytest.approx(327_680e-9, rel=1e-12)
    assert r["data moved (MB)"] == pytest.approx(61_440e-6, rel=1e-12)
    assert r["param: B"] == 2 and r.get("param: sliding_window") is None


def test_batch_prefill_on_paged_cache(rows):
    # 1 chunk of 16 new tokens on 8 cached: c_sq 16, c_sk 24, c_sqsq 256, c_sqsk 384.
    # pairs = 384 - 256/2 = 256 -> FLOPs = 2*8*128*256 = 524,288.
    # new 16*1280 = 20,480 elements; cached (24-16)*2*(64+64) = 2,048 elements
    # bytes (BF16 Q and cache) = (20,480 + 2,048)*2 = 45,056.
    r = rows["aiter::mha_batch_prefill"]
    assert r["GFLOP"] == pytest.approx(524_288e-9, rel=1e-12)
    assert r["data moved (MB)"] == pytest.approx(45_056e-6, rel=1e-12)


@pytest.mark.parametrize("name", ["aiter::paged_attention_ragged", FLASHINFER])
def test_paged_decode_fp8_cache(rows, name):
    # 4 decode requests, KV 37+64+100+130 = 331: g_sq 4, g_sk 331, g_sqsk 331.
    # FLOPs = 2*8*128*331 = 677,888.
    # Q/O 4*1024 = 4,096 elements at BF16 = 8,192 B; the new tokens' K/V 4*256 = 1,024 and
    # the cached (331-4)*2*128 = 83,712 elements are read from the cache at 1 B (FP8: uint8
    # storage for aiter, float8_e4m3fn for FlashInfer) -> 92,928 B.
    # B = len(kv_indptr [5]) - 1 = 4. aiter's ragged kernel computes in the KV dtype (FP8),
    # FlashInfer dequantizes to the query dtype (BF16).
    r = rows[name]
    assert r["GFLOP"] == pytest.approx(677_888e-9, rel=1e-12)
    assert r["data moved (MB)"] == pytest.approx(92_928e-6, rel=1e-12)
    assert r["param: B"] == 4
    assert r["compute spec"] == ("matrix_bf16" if name == FLASHINFER else "matrix_fp8")


@pytest.mark.parametrize("name", ["aiter::mla_decode_stage1_asm_fwd", "_C::cutlass_mla_decode"])
def test_mla_decode_latent(rows, name):
    # Same 4 decode requests; H_Q 16, one latent head d_qk 576, d_v 512 (from splitData
    # [4, 2, 16, 512]; for cutlass, q_nope 512 + q_pe 64 and out [4, 16, 512]). FLOPs = 2*16*(576+512)*331 = 11,524,096.
    # per new token 16*576 + 16*512 + 576 = 17,984 -> 4*17,984 = 71,936 elements;
    # cached latents (331-4)*576 = 188,352 elements (V shares them); BF16:
    # (71,936 + 188,352)*2 = 520,576 B.
    r = rows[name]
    assert r["GFLOP"] == pytest.approx(11_524_096e-9, rel=1e-12)
    assert r["data moved (MB)"] == pytest.approx(520_576e-6, rel=1e-12)
    assert r["param: d_h_v"] == 512


def test_flash_attn_varlen_on_chunk_statistics():

    rows = {
        r["param: B"]: r
        for r in analyzed(str(FIX)).sheet("SDPA_fwd").records()
        if r["name"] == "flash_attn::_flash_attn_varlen_forward"
    }
    # prefill 16 + 8 (causal): P = sqsk - sqsq/2 = 320 - 160 = 160 -> 2*8*160*128 = 327,680
    # (the mean-length estimate would be 2*(12*12 - 12^2/2) = 144 pairs, 294,912 FLOPs).
    # bytes Q + K + V + O = (24*8*64 + 2*24*2*64 + 24*8*64)*2 = 61,440
    r = rows[2]
    assert r["param: lengths"] == "chunk statistics"
    assert r["GFLOP"] == pytest.approx(327_680e-9, rel=1e-12)
    assert r["data moved (MB)"] == pytest.approx(61_440e-6, rel=1e-12)
    # mixed: chunk 16 on 8 cached + decode KV 10, 20, 30; sqsk 384 + 60 = 444,
    # sqsq 256 + 3 = 259 -> P = 444 - 129.5 = 314.5 -> 2*8*314.5*128 = 644,096
    # (mean lengths 4.75 / 21 would give 4*(4.75*21 - 4.75^2/2) = 353.875 pairs, 724,736).
    # bytes: Q 19*512*2 = 19,456, K = V = 84*128*2 = 21,504, O 19,456 -> 81,920
    r = rows[4]
    assert r["GFLOP"] == pytest.approx(644_096e-9, rel=1e-12)
    assert r["data moved (MB)"] == pytest.approx(81_920e-6, rel=1e-12)
