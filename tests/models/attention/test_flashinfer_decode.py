"""FlashInfer batch decode (flashinfer::batch_decode_with_kv_cache_*_run), by hand."""

from __future__ import annotations

import pytest

from perfreport.errors import ModelError
from perfreport.models.attention.flashinfer_decode import FlashInferBatchDecode, FlashInferBatchDecodeV020
from perfreport.models.registry import model_for
from perfreport.stats.iteration_formats import parse_iteration
from perfreport.tree import Op

BF16 = "c10::BFloat16"
# v0.2.1 - v0.3.x: the JIT module named by its URI registers "run"
NAME = (
    "batch_decode_with_kv_cache_dtype_q_bf16_dtype_kv_bf16_dtype_o_bf16_"
    "dtype_idx_i32_head_dim_qk_128_head_dim_vo_128_posenc_0_use_swa_True_"
    "use_logits_cap_False::run"
)
# v0.2.0 torch.library.custom_op: one head dim in the URI, layout/window at 10/11
NAME_V020 = (
    "flashinfer::batch_decode_with_kv_cache_dtype_q_bf16_dtype_kv_bf16_dtype_o_bf16_"
    "dtype_idx_i32_head_dim_128_posenc_0_use_swa_True_use_logits_cap_False_run"
)
# 32 decode requests, 55,086 KV tokens, plus a prefill chunk this kernel does not run
STEP = "execute_132_context_1(sq100sk100sqsq10000sqsk10000)_generation_32(sq32sk55086sqsq32sqsk55086)"


def _op(layout_code, window, cache):
    dims = [
        [1024],
        [1024],
        [4],
        [32, 64, 128],
        cache,
        cache,
        [33],
        [900],
        [32],
        [32, 64, 128],
        [],
        [],
        [],
        [],
        [],
        [],
        [],
        [],
        [],
    ]
    ci = [""] * 11 + [str(layout_code), str(window)] + [""] * 6
    o = Op(
        1,
        NAME,
        "cpu_op",
        1,
        1,
        0.0,
        10.0,
        {
            "Input Dims": dims,
            "Input type": ["unsigned char"] * 2 + ["int", BF16, BF16, BF16] + ["int"] * 3 + [BF16] + [""] * 9,
            "Concrete Inputs": ci,
        },
    )
    o.set_meta("iteration", parse_iteration(STEP))
    return model_for(NAME)(o)


def test_hnd_decode_by_hand():
    m = _op(1, -1, [900, 8, 64, 128])  # HND [pages, H_KV, page, D]
    assert isinstance(m, FlashInferBatchDecode)
    assert (m.B, m.H_Q, m.H_KV, m.d_h_qk, m.kv_layout) == (32, 64, 8, 128, "HND")
    # decode only: FLOPs = 2*64*(128 + 128)*55,086 = 1,805,058,048
    assert m.flops() == 1_805_058_048
    # new 32*(64*128*2 + 8*128*2) = 32*18,432 = 589,824; cached (55,086 - 32)*8*256
    # = 112,750,592 elements; BF16 -> (589,824 + 112,750,592)*2 = 226,680,832 B
    assert m.bytes() == 226_680_832


def test_nhd_layout_code_and_window_left():
    m = _op(0, 127, [900, 64, 8, 128])  # NHD [pages, page, H_KV, D]; W = 128
    assert (m.H_KV, m.kv_layout, m.window) == (8, "NHD", 128)
    # keys = min(55,086, 32 + 32*127) = 4,096; pairs = keys (one query per request)
    # FLOPs = 2*64*256*4,096 = 134,217,728; bytes (589,824 + (4,096 - 32)*2,048)*2
    assert m.flops() == 134_217_728
    assert m.bytes() == (589_824 + 4_064 * 2_048) * 2 == 17_825_792


def test_head_dim_mismatch_is_a_model_error():
    with pytest.raises(ModelError):
        _op(1, -1, [900, 8, 64, 64])


def test_v020_custom_op_positions():
    # v0.2.0 run_batch_decode(float_ws, int_ws, plan_info_vec, q, paged_k_cache, paged_v_cache,
    # paged_kv_indptr, paged_kv_indices, paged_kv_last_page_len, alibi_slopes, kv_layout_code,
    # window_left, logits_soft_cap, sm_scale, rope_scale, rope_theta, maybe_lse)
    cache = [900, 64, 8, 128]  # NHD
    dims = [[1024], [1024], [], [32, 64, 128], cache, cache, [33], [900], [32], [], [], [], [], [], [], [], []]
    types = ["unsigned char"] * 2 + ["ScalarList", BF16, BF16, BF16] + ["int"] * 3 + [""] + ["Scalar"] * 6 + [""]
    ci = [""] * 10 + ["0", "127", "0.0", "0.088", "1.0", "10000.0", ""]
    o = Op(1, NAME_V020, "cpu_op", 1, 1, 0.0, 10.0, {"Input Dims": dims, "Input type": types, "Concrete Inputs": ci})
    o.set_meta("iteration", parse_iteration(STEP))
    m = model_for(NAME_V020)(o)
    assert type(m) is FlashInferBatchDecodeV020
    # layout code 0 (NHD) at 10, window_left 127 at 11 -> W 128: the NHD/window figures above
    assert (m.H_KV, m.kv_layout, m.window) == (8, "NHD", 128)
    assert (m.flops(), m.bytes()) == (134_217_728, 17_825_792)
