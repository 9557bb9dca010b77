"""FlashInfer prefill and FlashMLA decode ops in a real torch.profiler capture, end to end.

fixtures/flashinfer_flashmla_ops.json.gz is written by scripts/capture_flashinfer_flashmla_
fixtures.py (stand-in torch.library ops under the recorded names and argument order, CPU
profiler with record_shapes, each call inside a vLLM detailed iteration annotation). H_Q 8,
H_KV 2 (GQA), d 64, BF16 queries for FlashInfer; the prefill step has 2 requests: 24 new
tokens on 40 cached (sk 64) and 8 new (sk 8): c_sq 32, c_sk 72, c_sqsq 24^2 + 8^2 = 640,
c_sqsk 24*64 + 8*8 = 1,600. MLA: H_Q 16, d_qk 576, d_v 512, 4 decode requests over
37 + 64 + 100 + 130 = 331 keys. Roofline on H200: 4.8 TB/s, 989.4 / 1978.9 TFLOP/s BF16 / FP8.
"""

from __future__ import annotations

from pathlib import Path

import pytest

FIX = Path(__file__).resolve().parents[3] / "fixtures" / "flashinfer_flashmla_ops.json.gz"
URI = (
    "batch_prefill_with_kv_cache_dtype_q_bf16_dtype_kv_{kv}_dtype_o_bf16_dtype_idx_i32_"
    "head_dim_qk_64_head_dim_vo_64_posenc_0_use_swa_{swa}_use_logits_cap_False_f16qk_False"
)
RAGGED = URI.format(kv="bf16", swa=False) + "::ragged_run"
PAGED = URI.format(kv="e4m3", swa=False) + "::paged_run"
PAGED_SWA = URI.format(kv="e4m3", swa=True) + "::paged_run"
MLA, MLA_FP8 = "_flashmla_C::fwd_kvcache_mla", "_flashmla_extension_C::fwd_kvcache_mla_fp8"


@pytest.fixture(scope="module")
def rows():
    from perfreport.pipeline import analyze

    rep = analyze(str(FIX), arch="h200")
    out = {}
    for r in rep.sheet("InferenceAttention_fwd").records():
        key = r["name"] + ("/656" if "656" in str(r.get("param: cache_row")) else "")
        assert key not in out and r["count"] == 1
        out[key] = r
    return out


def test_every_op_is_one_attention_row(rows):
    assert sorted(rows) == sorted([RAGGED, PAGED, PAGED_SWA, MLA, MLA + "/656", MLA_FP8])


def _check(r, flops, nbytes, spec="matrix_bf16"):
    assert r["GFLOP"] == pytest.approx(flops * 1e-9, rel=1e-12)
    assert r["data moved (MB)"] == pytest.approx(nbytes * 1e-6, rel=1e-12)
    assert r["compute spec"] == spec and r["bound"] == "memory"
    # memory-bound: roofline time = bytes / 4.8 TB/s
    assert r["roofline time (µs)"] == pytest.approx(nbytes / 4.8e12 * 1e6, rel=1e-9)


def test_ragged_new_tokens_causal(rows):
    # K/V = the 32 new tokens (SGLang's ragged pass): sqsk = sqsq = 640, pairs 640 - 320 = 320
    # FLOPs 2*8*(64 + 64)*320 = 655,360; Q + O 32*8*128*2 = 65,536, K + V 32*2*128*2 = 16,384
    _check(rows[RAGGED], 655_360, 81_920)


def test_paged_prefix_pass_fp8_cache(rows):
    # non-causal over the cached prefix: 72 - 32 = 40 keys, pairs 1,600 - 640 = 960 (= 24*40)
    # FLOPs 2,048*960 = 1,966,080; bytes 65,536 + 40*2*128*1 (FP8) = 75,776
    r = rows[PAGED]
    _check(r, 1_966_080, 75_776)
    assert "prefix" in r["param: lengths"]
    # other bound: every key (72) and pair (1,600): 65,536 + 72*256 = 83,968 B
    assert r["roofline time max (µs)"] == pytest.approx(83_968 / 4.8e12 * 1e6, rel=1e-9)


def test_paged_sliding_window(rows):
    # window_left 15 -> W 16: keys min(72, 32 + 2*15) = 62, pairs min(1,600 - 320, 32*16) = 512
    # FLOPs 2,048*512 = 1,048,576; bytes 65,536 + 62*256 = 81,408
    # lower bound: 32 + min(40, 15) = 47 keys -> 77,568 B (the truth: 39 + 8 = 47 keys)
    r = rows[PAGED_SWA]
    _check(r, 1_048_576, 81_408)
    assert r["param: sliding_window"] == 16
    assert r["roofline time min (µs)"] == pytest.approx(77_568 / 4.8e12 * 1e6, rel=1e-9)


def test_flashmla_bf16_latent(rows):
    # FLOPs 2*16*(576 + 512)*331 = 11,524,096; Q/O 4*16*(576 + 512)*2 = 139,264,
    # latent read once (1 KV head for 16 query heads): 331*576*2 = 381,312 -> 520,576
    _check(rows[MLA], 11_524_096, 520_576)


def test_flashmla_fp8_with_scale(rows):
    # 656-byte rows (512 FP8 + 16 scale + 128 rope bytes): 139,264 + 331*656 = 356,400;
    # dequantized to BF16 MMAs
    _check(rows[MLA + "/656"], 11_524_096, 356_400)


def test_flashmla_dense_fp8(rows):
    # FP8 q 4*16*576 = 36,864, BF16 out 4*16*512*2 = 65,536, cache 331*576 = 190,656 -> 293,056
    _check(rows[MLA_FP8], 11_524_096, 293_056, spec="matrix_fp8")
