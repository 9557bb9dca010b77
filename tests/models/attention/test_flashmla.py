"""FlashMLA decode (_flashmla_C::fwd_kvcache_mla and its forms), by hand."""

from __future__ import annotations

from perfreport.models.attention.flashmla import FlashMlaDecode, FlashMlaDecodeFp8
from perfreport.models.base import bounds
from perfreport.models.registry import model_for
from perfreport.stats.iteration_formats import parse_iteration
from perfreport.tree import Op

BF16, E4M3, I32 = "c10::BFloat16", "c10::Float8_e4m3fn", "int"
# DeepSeek-V3 decode step: 32 requests of 4096 KV tokens (one new each) + a 100-token prefill
STEP = "execute_132_context_1(sq100sk100sqsq10000sqsk10000)_generation_32(sq32sk131072sqsq32sqsk131072)"
FLOPS = 2 * 128 * (576 + 512) * 131_072  # = 36,507,222,016 (decode keys only)
NEW = 32 * 128 * (576 * 2 + 512 * 2)  # Q read + O written, BF16: 8,912,896 B


def _op(name, q, cache, q_t=BF16, kv_t=BF16, tail=None, vcache=False, step=STEP, causal=False, b=32, fp8=False):
    head = [q, cache] + ([[]] if vcache else [])
    tail = [[], []] if tail is None else tail
    dims = head + [[], [b], [b, 128], [], [], [132, 8], [b + 1]] + tail
    types = [q_t, kv_t] + ([""] if vcache else []) + ["Scalar", I32, I32, "Scalar", "Scalar", I32, I32]
    ci = [""] * len(head) + ["512", "", "", "0.0416", str(causal), "", ""]
    for i, d in enumerate(tail):  # 9: is_fp8 (bool) or descale_q [b]; 10: indices / descale_k
        types.append("Scalar" if d == [] and i == 0 else "" if d == [] else "float" if len(d) == 1 else I32)
        ci.append(("True" if fp8 else "False") if d == [] and i == 0 else "")
    o = Op(1, name, "cpu_op", 1, 1, 0.0, 10.0, {"Input Dims": dims, "Input type": types, "Concrete Inputs": ci})
    if step:
        o.set_meta("iteration", parse_iteration(step))
    return model_for(name)(o)


def test_bf16_latent_cache_by_hand():
    m = _op("_flashmla_C::fwd_kvcache_mla", [32, 1, 128, 576], [8192, 64, 1, 576])
    assert type(m) is FlashMlaDecode
    assert (m.b, m.H_Q, m.H_KV, m.d_h_qk, m.d_h_v, m.page) == (32, 128, 1, 576, 512, 64)
    # decode group only: FLOPs = 2*128*(576 + 512)*131,072 = 36,507,222,016
    assert m.flops() == FLOPS == 36_507_222_016
    # latent read once per KV head (1), shared by 128 query heads: 131,072*576*2 = 150,994,944
    # + Q/O 32*128*(576*2 + 512*2) = 8,912,896 -> 159,907,840 (= the aiter MLA figure)
    assert m.bytes() == NEW + 150_994_944 == 159_907_840
    assert m.assumptions() == [] and m.precision() == "bf16"


def test_fp8_with_scale_656_byte_rows():
    # is_fp8: [blocks, 64, 1, 656] uint8: 512 FP8 + 4 fp32 scales + 64 BF16 rope = 656 B/token
    m = _op("_flashmla_C::fwd_kvcache_mla", [32, 1, 128, 576], [8192, 64, 1, 656], kv_t="unsigned char", fp8=True)
    assert m.fp8_with_scale and m.flops() == FLOPS
    assert m.bytes() == NEW + 131_072 * 656 == 8_912_896 + 85_983_232 == 94_896_128
    assert m.precision() == "bf16"  # dequantized to BF16 MMAs


def test_dense_fp8_extension():
    # _flashmla_extension_C::fwd_kvcache_mla_fp8: FP8 q and cache, descale_q/k [32], BF16 out
    m = _op(
        "_flashmla_extension_C::fwd_kvcache_mla_fp8",
        [32, 1, 128, 576],
        [8192, 64, 1, 576],
        q_t=E4M3,
        kv_t=E4M3,
        tail=[[32], [32]],
    )
    assert type(m) is FlashMlaDecodeFp8 and m.precision() == "fp8"
    # Q 32*128*576*1 + O 32*128*512*2 = 2,359,296 + 4,194,304; cache 131,072*576*1
    assert m.bytes() == 2_359_296 + 4_194_304 + 75_497_472 == 82_051_072
    assert m.params()["dtype_KV_from"] == "kcache (argument 1)"
    assert m.flops() == FLOPS


def test_feb_2025_vcache_form_and_padding():
    # (q, kcache, vcache=None, head_size_v, seqlens_k, block_table, ...): argument 2 not an int
    m = _op("_flashmla_C::fwd_kvcache_mla", [40, 1, 128, 576], [8192, 64, 1, 576], vcache=True, b=40, tail=[])
    # 40 rows, 32 requests in the decode group: 8 CUDA-graph padding rows, read as Q/O
    assert "8 padded rows" in m.params()["lengths"]
    assert m.flops() == FLOPS
    assert m.bytes() == 40 * 128 * 2_176 + 150_994_944


def test_mtp_two_tokens_causal():
    # s_q = 2 (speculative decode), 16 requests of 4096 keys: g_sq 32, g_sk 65,536,
    # g_sqsq 16*4 = 64, g_sqsk 2*65,536 = 131,072 -> causal pairs 131,072 - 64/2 = 131,040
    step = "execute_32_context_0(sq0sk0sqsq0sqsk0)_generation_16(sq32sk65536sqsq64sqsk131072)"
    m = _op("_flashmla_C::dense_decode_fwd", [16, 2, 128, 576], [8192, 64, 1, 576], step=step, causal=True, b=16)
    assert m.causal and m.flops() == 2 * 128 * 1088 * 131_040 == 36_498_309_120
    # Q/O 16*2*128*2,176 = 8,912,896; cache 65,536*576*2 = 75,497,472
    assert m.bytes() == 8_912_896 + 75_497_472


def test_sparse_indices_topk():
    # indices [32, 1, 2048]: each query attends its 2048 listed tokens
    m = _op(
        "_flashmla_C::fwd_kvcache_mla",
        [32, 1, 128, 576],
        [8192, 64, 1, 656],
        kv_t="unsigned char",
        tail=[[], [32, 1, 2048]],
        fp8=True,
    )
    assert m.topk == 2048
    assert m.flops() == 2 * 128 * 1088 * 32 * 2048 == 18_253_611_008
    assert m.bytes() == NEW + 32 * 2048 * 656


def test_no_annotation_block_table_bounds():
    m = _op("_flashmla_C::fwd_kvcache_mla", [32, 1, 128, 576], [8192, 64, 1, 576], step=None)
    # block_table [32, 128] of 64-token pages: keys 32*128*64 = 262,144 (point) ... 32
    (a,) = m.assumptions()
    assert "262144" in a.text and m.flops() == 2 * 128 * 1088 * 262_144
    assert bounds(m, m.flops(), m.bytes()) == (2 * 128 * 1088 * 32, m.flops(), NEW + 32 * 1152, NEW + 262_144 * 1152)


def test_aug_2025_descale_form():
    # Apr - Aug 2025 fork: (q, kcache, head_size_v, ..., num_splits, descale_q, descale_k):
    # positions 9/10 are [b] tensors, not is_fp8/indices; FP8 e4m3 cache of 576 per token
    m = _op("_flashmla_C::fwd_kvcache_mla", [32, 1, 128, 576], [8192, 64, 1, 576], kv_t=E4M3, tail=[[32], [32]])
    assert not m.fp8_with_scale and m.topk is None
    assert m.bytes() == NEW + 131_072 * 576 == 84_410_368
