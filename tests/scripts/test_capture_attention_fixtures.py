"""scripts/capture_attention_fixtures.py and capture_flashinfer_flashmla_fixtures.py (both register
their stand-ins through scripts/stand_in_library.py and compute scripts/stand_in_attention.py's
attention), re-captured into tmp_path: each stand-in op records the shapes the attention models
read, under a vLLM annotation whose scheduled token count T is the op's number of query rows.

Shapes (module constants): H_Q 8, H_KV 2, D 64, pages of 16; MLA H_Q 16, latent 512 + 64 = 576.
"""

from __future__ import annotations

import pytest

from tests.scripts.kit import annotation_of, cpu_ops, load, op, scheduled_tokens

BF, U8, I32 = "c10::BFloat16", "unsigned char", "int"
E4M3 = "c10::Float8_e4m3fn"
FI_DECODE = (
    "batch_decode_with_kv_cache_dtype_q_bf16_dtype_kv_e4m3_dtype_o_bf16_dtype_idx_i32_"
    "head_dim_qk_64_head_dim_vo_64_posenc_0_use_swa_False_use_logits_cap_False::run"
)
FI_PREFILL = (
    "batch_prefill_with_kv_cache_dtype_q_bf16_dtype_kv_{}_dtype_o_bf16_dtype_idx_i32_"
    "head_dim_qk_64_head_dim_vo_64_posenc_0_use_swa_{}_use_logits_cap_False_f16qk_False::{}"
)

# (file, op, occurrence, query arg, query rows, {arg: (Input Dims, Input type)})
CALLS = [
    # prefill of 16 + 8 = 24 new tokens, K/V the same 24 tokens
    (
        "inference_attention_ops.json.gz",
        "aiter::mha_varlen_fwd",
        0,
        0,
        24,
        {0: ([24, 8, 64], BF), 1: ([24, 2, 64], BF), 3: ([3], I32)},
    ),
    ("inference_attention_ops.json.gz", "aiter::fmha_v3_varlen_fwd", 0, 0, 24, {}),
    # 16 new tokens on 8 cached: 24 keys in 8 NHD pages of 16
    ("inference_attention_ops.json.gz", "aiter::mha_batch_prefill", 0, 0, 16, {1: ([8, 16, 2, 64], BF)}),
    # decode of 4; FP8 cache stored as uint8, 40 pages of 16 >= ceil(37/16)+4+7+9 = 3+4+7+9 = 23
    (
        "inference_attention_ops.json.gz",
        "aiter::paged_attention_ragged",
        0,
        2,
        4,
        {3: ([40, 16, 2, 64], U8), 4: ([40, 16, 2, 64], U8)},
    ),
    (
        "inference_attention_ops.json.gz",
        "aiter::mla_decode_stage1_asm_fwd",
        0,
        0,
        4,
        {0: ([4, 16, 576], BF), 1: ([40, 16, 1, 576], BF), 4: ([23], I32)},
    ),
    (
        "inference_attention_ops.json.gz",
        "_C::cutlass_mla_decode",
        0,
        1,
        4,  # 576 - 512 = 64 rope
        {1: ([4, 16, 512], BF), 2: ([4, 16, 64], BF), 3: ([40, 16, 576], BF)},
    ),
    ("inference_attention_ops.json.gz", FI_DECODE, 0, 3, 4, {4: ([40, 16, 2, 64], E4M3)}),
    ("inference_attention_ops.json.gz", "flash_attn::_flash_attn_varlen_forward", 0, 0, 24, {}),
    # mixed: 16 + 3 = 19 queries; keys 24 + 10 + 20 + 30 = 84
    (
        "inference_attention_ops.json.gz",
        "flash_attn::_flash_attn_varlen_forward",
        1,
        0,
        19,
        {1: ([84, 2, 64], BF), 4: ([5], I32)},
    ),
    # FlashInfer prefill of 24 + 8 = 32 new tokens; FP8 pages [12, 16, 2, 64]
    (
        "flashinfer_flashmla_ops.json.gz",
        FI_PREFILL.format("bf16", False, "ragged_run"),
        0,
        3,
        32,
        {3: ([32, 8, 64], BF), 4: ([32, 2, 64], BF)},
    ),
    (
        "flashinfer_flashmla_ops.json.gz",
        FI_PREFILL.format("e4m3", False, "paged_run"),
        0,
        3,
        32,
        {4: ([12, 16, 2, 64], E4M3)},
    ),
    ("flashinfer_flashmla_ops.json.gz", FI_PREFILL.format("e4m3", True, "paged_run"), 0, 3, 32, {}),
    # FlashMLA decode of 4: q [B, 1, 16, 576]; pages of 64, 656 = 512 + 4·4 + 64·2 bytes per token
    (
        "flashinfer_flashmla_ops.json.gz",
        "_flashmla_C::fwd_kvcache_mla",
        0,
        0,
        4,
        {1: ([8, 64, 1, 576], BF), 4: ([4, 3], I32)},
    ),
    ("flashinfer_flashmla_ops.json.gz", "_flashmla_C::fwd_kvcache_mla", 1, 0, 4, {1: ([8, 64, 1, 656], U8)}),
    (
        "flashinfer_flashmla_ops.json.gz",
        "_flashmla_extension_C::fwd_kvcache_mla_fp8",
        0,
        0,
        4,
        {0: ([4, 1, 16, 576], E4M3), 1: ([8, 64, 1, 576], E4M3)},
    ),
]


@pytest.mark.parametrize(
    "name,opname,i,q_arg,rows,args", CALLS, ids=[f"{c[1].rsplit('::', 1)[-1]}-{c[2]}" for c in CALLS]
)
def test_the_stand_in_records_its_shapes_under_a_matching_annotation(name, opname, i, q_arg, rows, args, captured):
    e = op(cpu_ops(captured / name), opname, i)
    dims, types = e["args"]["Input Dims"], e["args"]["Input type"]
    q = dims[q_arg]
    assert q[0] * (q[1] if len(q) == 4 else 1) == rows  # FlashMLA q is [B, sq, H, D]
    for pos, (d, t) in args.items():
        assert (dims[pos], types[pos]) == (d, t), (opname, pos)
    assert scheduled_tokens(annotation_of(load(captured / name), e)) == rows


def test_the_two_scripts_share_one_decode_step(captured):
    """4 requests of KV 37, 64, 100, 130: Σ sk = 331, as the annotation both scripts write says."""
    assert 37 + 64 + 100 + 130 == 331
    for name in ("inference_attention_ops.json.gz", "flashinfer_flashmla_ops.json.gz"):
        notes = {e["name"] for e in load(captured / name)["traceEvents"] if e.get("cat") == "user_annotation"}
        assert "execute_4_context_0(sq0sk0sqsq0sqsk0)_generation_4(sq4sk331sqsq4sqsk331)" in notes
