"""MLA decode in latent dims (aiter::mla_decode_stage1_asm_fwd), by hand."""

from __future__ import annotations

from perfreport.models.attention.mla import AiterMlaDecode, CutlassMlaDecode, Sm100CutlassMlaDecode
from perfreport.models.registry import model_for
from perfreport.stats.iteration_formats import parse_iteration
from perfreport.tree import Op

BF16, FP8 = "c10::BFloat16", "c10::Float8_e4m3fnuz"
# DeepSeek-V3 decode step: 32 requests of 4096 KV tokens (one new each) + a 100-token prefill
STEP = "execute_132_context_1(sq100sk100sqsq10000sqsk10000)_generation_32(sq32sk131072sqsq32sqsk131072)"


def _mla(kv_dtype, out_dims=(32, 128, 512)):
    dims = [[32, 128, 576], [8192, 16, 1, 576], [33], [33], [8192], [32], [], [], [], list(out_dims)]
    o = Op(
        1,
        "aiter::mla_decode_stage1_asm_fwd",
        "cpu_op",
        1,
        1,
        0.0,
        10.0,
        {
            "Input Dims": dims,
            "Input type": [BF16, kv_dtype] + ["int"] * 4 + [""] * 3 + ["float"],
            "Concrete Inputs": [""] * len(dims),
        },
    )
    o.set_meta("iteration", parse_iteration(STEP))
    return AiterMlaDecode(o)


def test_deepseek_v3_decode_by_hand():
    m = _mla(BF16)
    assert model_for("aiter::mla_decode_stage1_asm_fwd") is AiterMlaDecode
    assert (m.H_Q, m.H_KV, m.d_h_qk, m.d_h_v) == (128, 1, 576, 512)
    # decode only (the prefill chunk is another op): FLOPs = 2*128*(576 + 512)*131072
    assert m.flops() == 2 * 128 * 1088 * 131072 == 36_507_222_016
    # new tokens: Q read + O written 32*(128*576 + 128*512) = 32*139,264 = 4,456,448 elements
    # at the query dtype; their latents 32*576 = 18,432 elements, read from the cache
    # cached latents: (131072 - 32)*576 = 75,479,040 elements (V is the same vector)
    t = m.byte_terms()
    assert (t["ctx_elems_q"], t["ctx_elems_o"], t["ctx_elems_new_kv"], t["ctx_elems_kv"]) == (0, 0, 0, 0)
    # Q 32*128*576 = 2,359,296 + O 32*128*512 = 2,097,152 = 4,456,448
    assert (t["gen_elems_q"], t["gen_elems_o"]) == (2_359_296, 2_097_152)
    assert (t["gen_elems_new_kv"], t["gen_elems_kv"]) == (18_432, 75_479_040)
    assert m.bytes() == (4_456_448 + 18_432 + 75_479_040) * 2 == 159_907_840
    # an FP8 latent cache halves every latent read (the new tokens' are in the cache too)
    assert _mla(FP8).bytes() == 4_456_448 * 2 + 18_432 + 75_479_040 == 84_410_368


def test_d_v_assumed_without_an_output_shape():
    m = _mla(BF16, out_dims=(1,))
    assert m.d_h_v == 512 and "assumed" in str(m.params()["d_h_v"])


def _cutlass(name, dims, types):
    o = Op(
        1,
        name,
        "cpu_op",
        1,
        1,
        0.0,
        10.0,
        {"Input Dims": dims, "Input type": types, "Concrete Inputs": [""] * len(dims)},
    )
    o.set_meta("iteration", parse_iteration(STEP))
    return model_for(name)(o)


def test_cutlass_mla_decode_forms_match_the_aiter_figures():
    # the same DeepSeek-V3 step: q_nope [32, 128, 512] + q_pe [32, 128, 64] -> d_qk 576,
    # out [32, 128, 512] -> d_v 512, cache [8192, 16, 576] (one latent head)
    cache, nope, pe, out = [8192, 16, 576], [32, 128, 512], [32, 128, 64], [32, 128, 512]
    vllm = _cutlass(
        "_C::cutlass_mla_decode",
        [out, nope, pe, cache, [32], [32, 256], []],
        [BF16, BF16, BF16, FP8, "int", "int", "Scalar"],
    )
    sm100 = _cutlass(
        "_C::sm100_cutlass_mla_decode",
        [out, [32, 128], nope, pe, cache, [32], [32, 256], [1024], [], []],
        [BF16, "float", BF16, BF16, FP8, "int", "int", "unsigned char", "Scalar", "Scalar"],
    )
    old_sgl = _cutlass(
        "sgl_kernel::cutlass_mla_decode",
        [out, [32, 128, 576], cache, [32], [32, 256], [1024]],
        [BF16, BF16, FP8, "int", "int", "unsigned char"],
    )
    assert type(vllm) is CutlassMlaDecode and type(sm100) is Sm100CutlassMlaDecode
    for m in (vllm, sm100, old_sgl):
        assert (m.H_Q, m.H_KV, m.d_h_qk, m.d_h_v) == (128, 1, 576, 512)
        # FLOPs 2*128*1088*131072; bytes 4,456,448*2 (BF16 Q, O) + (18,432 + 75,479,040)*1
        # (every latent read from the FP8 cache)
        assert m.flops() == 36_507_222_016
        assert m.bytes() == 84_410_368
        assert "assumed" not in str(m.params()["d_h_v"])
