"""FlashInfer batch prefill (<uri>::ragged_run / paged_run and the v0.2.0 names), by hand."""

from __future__ import annotations

import pytest

from perfreport.errors import ModelError
from perfreport.models.attention import flashinfer_paged_prefill as fipp
from perfreport.models.attention import flashinfer_prefill as fip
from perfreport.models.base import bounds
from perfreport.models.registry import model_for
from perfreport.stats.iteration_formats import parse_iteration
from perfreport.tree import Op

BF16, E4M3, I32 = "c10::BFloat16", "c10::Float8_e4m3fn", "int"
URI = (
    "batch_prefill_with_kv_cache_dtype_q_bf16_dtype_kv_{kv}_dtype_o_bf16_dtype_idx_i32_"
    "head_dim_qk_{d}_head_dim_vo_{d}_posenc_0_use_swa_{swa}_use_logits_cap_False_f16qk_False"
)
# 2 prefill requests: a chunk of 100 new tokens on 412 cached (sk 512) and 50 new (sk 50):
# c_sq 150, c_sk 562, c_sqsq 100^2 + 50^2 = 12,500, c_sqsk 100*512 + 50*50 = 53,700;
# plus 4 decode requests (4,000 keys) that the decode wrapper runs, not this op
STEP = "execute_154_context_2(sq150sk562sqsq12500sqsk53700)_generation_4(sq4sk4000sqsq4sqsk4000)"


def _op(name, dims, types, ci, step=STEP):
    o = Op(1, name, "cpu_op", 1, 1, 0.0, 10.0, {"Input Dims": dims, "Input type": types, "Concrete Inputs": ci})
    if step:
        o.set_meta("iteration", parse_iteration(step))
    return model_for(name)(o)


def _paged(kv=E4M3, mask=1, window=-1, step=STEP, h_q=32, h_kv=8, d=128, pages=36):
    name = URI.format(kv="e4m3" if kv == E4M3 else "bf16", d=d, swa=window >= 0) + "::paged_run"
    cache = [100, 16, h_kv, d]  # NHD [pages, page, H_KV, D]
    dims = [[1024], [1024], [8], [150, h_q, d], cache, cache, [3], [3], [pages], [2], [150, h_q, d], [], [], [], [], []]
    types = ["unsigned char"] * 2 + ["long int", BF16, kv, kv] + [I32] * 4 + [BF16, ""] + ["Scalar"] * 3 + ["Scalar"]
    ci = [""] * 12 + [str(mask), "0", str(window), "False"]
    return _op(name, dims, types, ci, step)


def test_paged_gqa_fp8_cache_causal():
    m = _paged()
    assert type(m) is fipp.FlashInferPagedPrefill
    assert (m.B, m.N_Q, m.H_Q, m.H_KV, m.page, m.kv_layout) == (2, 150, 32, 8, 16, "NHD")
    # the prefill group only (N_Q 150 = c_sq): pairs = 53,700 - 12,500/2 = 47,450
    # FLOPs = 2*32*(128 + 128)*47,450 = 16,384*47,450 = 777,420,800
    assert m.flops() == 777_420_800
    # Q read + O written: 150*32*(128*2 + 128*2) = 2,457,600 B (BF16)
    # KV: every key from the cache at 1 B (FP8): 562*8*(128 + 128)*1 = 1,150,976 B
    assert m.params()["bytes_QO"] == 2_457_600 and m.params()["bytes_KV"] == 1_150_976
    assert m.bytes() == 3_608_576
    assert m.precision() == "bf16" and m.assumptions() == []
    assert m.params()["lengths"] == "chunk statistics (prefill group)"
    assert m.params()["dtype_KV_from"] == "paged_k_cache (argument 4)"  # the FP8 cache, not q's BF16


def test_paged_sliding_window_left():
    m = _paged(window=127)  # W = 128 keys
    # keys = min(562, 150 + 2*127) = 404, pairs = min(47,450, 150*128) = 19,200
    # FLOPs 16,384*19,200 = 314,572,800; bytes 2,457,600 + 404*2,048 = 3,284,992
    assert (m.window, m.flops(), m.bytes()) == (128, 314_572_800, 3_284_992)
    # lower bounds: keys 150 + min(412, 127) = 277, pairs 2*f(75) = 2*(75*76/2) = 5,700
    # (the truth here: request 1 reads 100 + 127 = 227 keys, request 2 its 50 -> 277)
    assert bounds(m, m.flops(), m.bytes()) == (16_384 * 5_700, 314_572_800, 2_457_600 + 277 * 2_048, 3_284_992)


def test_paged_without_annotation_bounds_from_pages():
    m = _paged(step=None)
    # B = len(qo_indptr) - 1 = 2; 36 pages of 16: keys 576 (point) ... 576 - 2*15 = 546
    # equal requests: sqsq = 150^2/2 = 11,250, sqsk = 150*576/2 = 43,200
    # pairs = 43,200 - 5,625 = 37,575 -> FLOPs 16,384*37,575 = 615,628,800
    assert m.flops() == 615_628_800
    assert m.bytes() == 2_457_600 + 576 * 2_048 == 3_637_248
    kv, est = m.assumptions()
    assert "546" in kv.text and kv.bytes_min == 2_457_600 + 546 * 2_048
    # keys 546: sqsk = 150*546/2 = 40,950 -> pairs 35,325 -> 578,764,800
    assert kv.flops_min == 16_384 * 35_325
    # sqsq in [11,250, 149^2 + 1 = 22,202], sqsk in [11,250, 150*576 = 86,400]:
    # pairs from 11,250 - 11,101 = 149 to 86,400 - 5,625 = 80,775
    assert (est.flops_min, est.flops_max) == (16_384 * 149, 16_384 * 80_775)
    assert m.params()["lengths"].startswith("shapes only (no iteration annotation")


def _ragged(total_k, mask=1, name=None, step=STEP):
    name = name or URI.format(kv="bf16", d=64, swa=False) + "::ragged_run"
    kv = [total_k, 4, 64]  # NHD [total_k, H_KV, D]
    dims = [[1024], [1024], [8], [150, 16, 64], kv, kv, [3], [3], [150, 16, 64], [], [], [], []]
    types = ["unsigned char"] * 2 + ["long int", BF16, BF16, BF16, I32, I32, BF16, ""] + ["Scalar"] * 3
    return _op(name, dims, types, [""] * 10 + [str(mask), "0", "-1"], step)


def test_ragged_new_tokens_only_gqa():
    # SGLang's ragged pass: K/V = the 150 new tokens (H_KV 4 of H_Q 16): sk_i = sq_i,
    # sqsk = sqsq = 12,500 -> causal pairs 12,500 - 6,250 = 6,250
    m = _ragged(150)
    assert type(m) is fip.FlashInferRaggedPrefill and m.H_KV == 4
    assert m.flops() == 2 * 16 * (64 + 64) * 6_250 == 25_600_000
    # Q + O 150*16*128*2 = 614,400; K + V 150*4*128*2 = 153,600
    assert m.bytes() == 768_000
    assert "new tokens only" in m.params()["lengths"]
    # non-causal (mask_mode 0): every pair, sqsk = 12,500 -> 4,096*12,500
    assert _ragged(150, mask=0).flops() == 51_200_000


def test_ragged_every_key_and_v020_order():
    # K/V hold every key (total_k 562 = c_sk): pairs 47,450 -> 4,096*47,450 = 194,355,200;
    # bytes 614,400 + 562*4*128*2 = 614,400 + 575,488 = 1,189,888
    m = _ragged(562)
    assert (m.flops(), m.bytes()) == (194_355_200, 1_189_888)
    # v0.2.0 custom op: (mask_mode, float_ws, int_ws, plan_info_vec, q, k, v, custom_mask,
    # alibi, qo_indptr, kv_indptr, qk_indptr, layout, window_left, ...) -> same figures
    name = (
        "flashinfer::"
        + URI.format(kv="bf16", d=64, swa=False).replace("head_dim_qk_64_head_dim_vo_64", "head_dim_64")
        + "_ragged_run"
    )
    kv = [562, 4, 64]
    dims = [[], [1024], [1024], [], [150, 16, 64], kv, kv, [], [], [3], [3], [], [], []]
    types = [
        "Scalar",
        "unsigned char",
        "unsigned char",
        "ScalarList",
        BF16,
        BF16,
        BF16,
        "",
        "",
        I32,
        I32,
        "",
        "Scalar",
        "Scalar",
    ]
    old = _op(name, dims, types, ["1"] + [""] * 11 + ["0", "-1"])
    assert type(old) is fip.FlashInferRaggedPrefillV020
    assert (old.flops(), old.bytes()) == (194_355_200, 1_189_888)


def test_name_head_dims_must_match_tensors():
    with pytest.raises(ModelError, match="head dims"):
        _ragged(150, name=URI.format(kv="bf16", d=128, swa=False) + "::ragged_run")


def test_paged_non_causal_is_the_prefix_pass():
    # SGLang extend with a cached prefix: ragged_run over the new tokens (causal), then
    # paged_run over the prefix only (mask_mode 0). Prefix keys 562 - 150 = 412,
    # pairs sqsk - sqsq = 53,700 - 12,500 = 41,200 (request 1: 100*412; request 2 none)
    m = _paged(mask=0)
    assert m.flops() == 16_384 * 41_200 == 675_020_800
    assert m.bytes() == 2_457_600 + 412 * 2_048 == 3_301_376
    (a,) = m.assumptions()
    # other bound: every key, every pair: 562 keys, 53,700 pairs
    assert (a.bytes_max, a.flops_max) == (3_608_576, 16_384 * 53_700)
    assert "prefix" in m.params()["lengths"]


def test_paged_hnd_layout_code():
    # layout code 1: HND caches [pages, H_KV, page, D] = [100, 8, 16, 128]
    name = URI.format(kv="e4m3", d=128, swa=False) + "::paged_run"
    cache = [100, 8, 16, 128]
    dims = [[1024], [1024], [8], [150, 32, 128], cache, cache, [3], [3], [36], [2], [150, 32, 128], [], [], [], [], []]
    types = ["unsigned char"] * 2 + ["long int", BF16, E4M3, E4M3] + [I32] * 4 + [BF16, ""] + ["Scalar"] * 4
    m = _op(name, dims, types, [""] * 12 + ["1", "1", "-1", "False"])
    assert (m.H_KV, m.page, m.kv_layout) == (8, 16, "HND")
    assert (m.flops(), m.bytes()) == (777_420_800, 3_608_576)  # the NHD figures above


def test_paged_custom_mask_every_pair_bounded_by_causal():
    # mask_mode 2 (custom): density unknown, every (q, k) pair counted: c_sqsk = 53,700 pairs,
    # FLOPs 16,384*53,700 = 879,820,800; lower bound the causal count 47,450 -> 777,420,800;
    # bytes unchanged (every key read once either way): 3,608,576
    m = _paged(mask=2)
    assert (m.flops(), m.bytes()) == (879_820_800, 3_608_576)
    (a,) = m.assumptions()
    assert "custom mask" in a.text
    assert (a.flops_min, a.flops_max, a.bytes_min, a.bytes_max) == (777_420_800, 879_820_800, 3_608_576, 3_608_576)


def test_paged_non_causal_shapes_only_bounds_hold_a_prefix_shorter_than_the_queries():
    # no annotation: 2 requests, 150 new tokens, 4 listed pages of 16 -> at most 64 prefix keys,
    # at least 64 - 2*15 = 34 (each request's last page holds >= 1 key); a prefix pass may read
    # fewer keys than it has queries, so N_Q = 150 is no lower bound (it was: bounds "150 … 64")
    m = _paged(mask=0, step=None, pages=4)
    # point: 64 keys, equal requests: sqsk = 150*64/2 = 4,800 pairs (non-causal: every pair)
    # FLOPs 16,384*4,800 = 78,643,200; bytes 2,457,600 + 64*8*256*1 = 2,588,672
    assert (m.flops(), m.bytes()) == (78_643_200, 2_588_672)
    kv, per_req = m.assumptions()
    assert "bounds 34 … 64" in kv.text
    # 34 keys: sqsk 150*34/2 = 2,550 -> 41,779,200 FLOPs, 2,457,600 + 34*2,048 = 2,527,232 B
    assert (kv.flops_min, kv.flops_max, kv.bytes_min, kv.bytes_max) == (41_779_200, 78_643_200, 2_527_232, 2_588_672)
    # the split: sqsk in [sk, sq*sk] = [64, 9,600] (each key has >= 1 query of its request);
    # sq²/R = 11,250 assumed sk_i >= sq_i and put the point outside its own bounds
    assert (per_req.flops_min, per_req.flops_max) == (16_384 * 64, 16_384 * 9_600)
    assert per_req.flops_min <= m.flops() <= per_req.flops_max
