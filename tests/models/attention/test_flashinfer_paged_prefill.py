"""models/attention/flashinfer_paged_prefill.py: FlashInfer's paged prefill, worked by hand on a
small step in both call forms (``<uri>::paged_run`` and the v0.2.0 custom op), the prefix-pass
bounds, and refusals (the larger GQA / FP8 / window cases: tests/models/attention/test_flashinfer_prefill.py)."""

from __future__ import annotations

import pytest

from perfreport.errors import ModelError
from perfreport.models.attention import flashinfer_paged_prefill as fipp
from perfreport.models.registry import model_for
from perfreport.stats.iteration_formats import parse_iteration
from tests.kit import cpu_op

BF16, I32 = "c10::BFloat16", "int"
URI = (
    "batch_prefill_with_kv_cache_dtype_q_bf16_dtype_kv_bf16_dtype_o_bf16_dtype_idx_i32_"
    "head_dim_qk_64_head_dim_vo_64_posenc_0_use_swa_False_use_logits_cap_False_f16qk_False"
)
# one request: 10 new tokens on 20 cached (sk 30): sqsq 100, sqsk 300
STEP = parse_iteration("execute_10_context_1(sq10sk30sqsq100sqsk300)_generation_0(sq0sk0sqsq0sqsk0)")
CACHE = [10, 16, 2, 64]  # NHD [pages, page, H_KV, D]


def _model(name, dims, types, ci):
    op = cpu_op(name, dims, types, ci, meta={"iteration": STEP})
    return model_for(name)(op)


def _paged_run(mask=1, indices=(2,)):
    dims = [
        [1024],
        [1024],
        [8],
        [10, 4, 64],
        CACHE,
        CACHE,
        [2],
        [2],
        list(indices),
        [1],
        [10, 4, 64],
        [],
        [],
        [],
        [],
        [],
    ]
    types = ["unsigned char"] * 2 + ["long int", BF16, BF16, BF16] + [I32] * 4 + [BF16, ""] + ["Scalar"] * 4
    return _model(URI + "::paged_run", dims, types, [""] * 12 + [str(mask), "0", "-1", "False"])


def test_paged_run_causal_by_hand():
    m = _paged_run()
    assert type(m) is fipp.FlashInferPagedPrefill
    assert (m.B, m.N_Q, m.H_Q, m.H_KV, m.page, m.kv_layout) == (1, 10, 4, 2, 16, "NHD")
    # pairs = sqsk - sqsq / 2 = 300 - 50 = 250; FLOPs = 2 * H_Q * (64 + 64) * 250
    assert m.flops() == 256_000
    # Q read + O written: 10 * 4 * (64 + 64) * 2 B = 10,240; K/V: 30 keys * 2 heads * 128 * 2 B = 15,360
    assert m.bytes() == 25_600 and m.assumptions() == []


def test_the_v020_custom_op_reads_the_same_figures():
    name = "flashinfer::" + URI.replace("head_dim_qk_64_head_dim_vo_64", "head_dim_64") + "_paged_run"
    # (mask_mode, float_ws, int_ws, plan_info, q, k, v, custom_mask, alibi, qo_indptr, kv_indptr,
    #  kv_indices, kv_last_page_len, qk_indptr, layout, window_left, ...)
    dims = [[], [1024], [1024], [], [10, 4, 64], CACHE, CACHE, [], [], [2], [2], [2], [1], [], [], []]
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
        I32,
        I32,
        "",
        "Scalar",
        "Scalar",
    ]
    m = _model(name, dims, types, ["1"] + [""] * 13 + ["0", "-1"])
    assert type(m) is fipp.FlashInferPagedPrefillV020
    assert (m.flops(), m.bytes()) == (256_000, 25_600)


def test_non_causal_is_the_prefix_pass_with_every_key_as_the_other_bound():
    m = _paged_run(mask=0)
    # prefix keys 30 - 10 = 20, pairs sqsk - sqsq = 300 - 100 = 200
    assert m.flops() == 1024 * 200 and m.bytes() == 10_240 + 20 * 512
    (a,) = m.assumptions()
    assert (a.flops_max, a.bytes_max) == (1024 * 300, 25_600)


def test_prefix_bounds_and_refusals():
    assert fipp._prefix_est({"sqsq": (10, 40), "sqsk": (50, 100)}) == {"sqsk": (10, 90)}
    assert fipp._prefix_est({"sqsq": (10, 40)}) == {} and fipp._prefix_est({}) == {}
    m = _paged_run(indices=(2, 1))  # 2-D indices: the pages are unknown
    with pytest.raises(ModelError, match="paged_kv_indices is not 1-d"):
        m.shape_keys()
