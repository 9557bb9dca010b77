"""MoE models: hand-worked FLOPs/bytes on the captured stand-in ops, the dense reference
(E = 1, k = 1 equals a gated MLP's two GEMMs), distinct-expert bounds, and the real vLLM
GPT-OSS decode capture."""

from pathlib import Path

import pytest

from perfreport.errors import ModelError
from perfreport.models import gemm
from perfreport.models.moe import experts as moe
from perfreport.models.moe import weights
from perfreport.models.args import Tensor
from perfreport.models.base import bounds
from perfreport.models.registry import model_for
from perfreport.pipeline import load_tree

ROOT = Path(__file__).resolve().parents[3]
FIX = ROOT / "fixtures"
U8, BF16 = "unsigned char", "c10::BFloat16"


@pytest.fixture(scope="module")
def moe_tree():
    return load_tree(str(FIX / "serving_moe.json.gz"))


def _one(tree, name, i=0):
    return tree.ops_named(name)[i]


def test_expected_distinct_and_bounds():
    # 8·(1 − 0.75^6) = 8·(1 − 0.177978515625) = 6.576171875
    assert moe.expected_distinct(8, 2, 6) == pytest.approx(6.576171875)
    assert moe.distinct_bounds(8, 2, 6) == (2, 8)  # k … min(E, T·k = 12)
    assert moe.distinct_bounds(32, 4, 1) == (4, 4)  # one token touches exactly k
    assert moe.expected_distinct(32, 4, 1) == pytest.approx(4.0)


def test_vllm_moe_forward_mxfp4_views(moe_tree):
    op = _one(moe_tree, "vllm::moe_forward")
    assert model_for(op.name) is moe.VllmMoeForward
    m = moe.VllmMoeForward(op)
    p = m.params()
    assert (p["T"], p["H"], p["I"], p["E"], p["top_k"], p["gated"]) == (6, 64, 96, 8, 2, True)
    assert p["weight_format"] == "mxfp4 (uint8 storage)"
    # 2·T·k·(H·2I + I·H) = 2·6·2·(64·192 + 96·64) = 24·18432 = 442368
    assert m.flops() == 442368
    # per expert: w13 [32, 192] u8 = 6144 B + w2 [48, 64] u8 = 3072 B + MX scales
    # (64·192 + 96·64)/32 = 576 B -> 9792 B;  io: x 6·64·2 = 768 + logits 6·8·2 = 96 + out 768
    # = 1632;  bytes = 1632 + 6.576171875·9792 = 1632 + 64393.875 = 66025.875
    assert m.bytes() == pytest.approx(66025.875)
    (a,) = m.assumptions()
    assert (a.bytes_min, a.bytes_max) == (1632 + 2 * 9792, 1632 + 8 * 9792)  # 21216, 79968
    assert "6.6 expected" in a.text and "bounds 2 … 8" in a.text
    assert bounds(m, m.flops(), m.bytes())[2:] == (21216, 79968)
    assert m.compute_spec() == "matrix_bf16" and m.category == "MoE"


def test_fused_experts_bf16(moe_tree):
    op = _one(moe_tree, "vllm::outplace_fused_experts", 0)
    m = moe.FusedExperts(op)
    assert (m.T, m.k, m.experts.E, m.experts.H, m.experts.I) == (6, 2, 8, 64, 96)
    assert m.flops() == 442368
    # per expert (192·64 + 64·96)·2 B = 36864; io: x 768 + topk_weights 6·2·4 = 48 + ids 48
    # + out 768 = 1632; 1632 + 6.576171875·36864 = 1632 + 242424 = 244056
    assert m.bytes() == pytest.approx(244056.0)


def test_dense_reference_equals_gated_mlp_gemms(moe_tree):
    """E = 1, k = 1: the MoE formula equals the GEMM models on the stand-in's own aten::mm
    children (one [1,H]x[H,2I] and one [1,I]x[I,H] per token)."""
    op = _one(moe_tree, "vllm::outplace_fused_experts", 1)
    m = moe.FusedExperts(op)
    assert (m.experts.E, m.k) == (1, 1)
    mms = [o for o in op.walk() if o.name == "aten::mm"]
    assert len(mms) == 2 * 6
    # per token 2·192·64 + 2·64·96 = 24576 + 12288; ×6 = 221184 = 2·6·(64·192 + 96·64)
    assert m.flops() == sum(gemm.Mm(o).flops() for o in mms) == 221184
    # one expert touched by every token: the weights are read once, no assumption range
    (a,) = m.assumptions()
    assert a.bytes_min == a.bytes_max == m.bytes()


class _Op:
    def __init__(self, name, dims, types, concrete=None, meta=None):
        self.name, self.perf_meta = name, meta or {}
        self.args = {"Input Dims": dims, "Input type": types, "Concrete Inputs": concrete or [""] * len(dims)}


def test_solve_orientations_and_packing():
    o = _Op("x", [], [])
    # [E, 2I, H] bf16 / [E, H, I]
    e = weights.solve_experts(o, 64, Tensor((4, 64, 64), BF16), Tensor((4, 64, 32), BF16))
    assert (e.I, e.gated, e.bytes_per_expert) == (32, True, 12288)
    # ungated: w1 [E, I, H]
    e = weights.solve_experts(o, 64, Tensor((4, 32, 64), BF16), Tensor((4, 64, 32), BF16))
    assert (e.I, e.gated) == (32, False)
    # FP8 stored as uint8, [E, 2I, H]: 1 byte per value, no derived scales
    e = weights.solve_experts(o, 64, Tensor((4, 64, 64), U8), Tensor((4, 64, 32), U8))
    assert (e.I, e.bytes_per_expert) == (32, 64 * 64 + 64 * 32)
    with pytest.raises(ModelError, match="do not match hidden size"):
        weights.solve_experts(o, 100, Tensor((4, 64, 64), BF16), Tensor((4, 64, 32), BF16))


def test_config_fallback_and_missing_sizes():
    dims, types = [[4, 64], [4, 8], []], [BF16, BF16, ""]
    cfg = {"top_k": 2, "num_experts": 8, "intermediate_size": 32, "weight_format": "mxfp4"}
    m = moe.VllmMoeForward(_Op("vllm::moe_forward", dims, types, meta={"moe_config": cfg}))
    # per expert (64·64 + 32·64) values · (0.5 + 1/32) B = 6144 · 0.53125 = 3264
    assert m.experts.bytes_per_expert == 3264 and m.experts.source == "model config"
    with pytest.raises(ModelError, match="top-k unknown"):
        moe.VllmMoeForward(_Op("vllm::moe_forward", dims, types))
    with pytest.raises(ModelError, match="give --model-config"):
        moe.VllmMoeForward(_Op("vllm::moe_forward", dims, types, meta={"moe_top_k": 2}))


VLLM = FIX / "vllm_decode_graph.json.gz"
CAPTURE = FIX / "vllm_decode_capture"


def test_vllm_gpt_oss_decode_capture():
    """GPT-OSS MoE layer of the shared vLLM decode capture (T 32, H 3072 padded, E 32, k 4,
    MXFP4 views [32, 1536, 5888] / [32, 1472, 3072])."""
    tree = load_tree(str(VLLM), graph_capture=str(CAPTURE))
    op = tree.ops_named("vllm::moe_forward")[0]
    m = moe.VllmMoeForward(op)
    assert (m.T, m.H, m.experts.I, m.experts.E, m.k) == (32, 3072, 2944, 32, 4)
    # 2·32·4·(3072·5888 + 2944·3072) = 256·27131904 = 6945767424
    assert m.flops() == 6945767424
    # per expert: 1536·5888 + 1472·3072 = 9043968 + 4521984 bytes packed, + scales
    # (3072·5888 + 2944·3072)/32 = 847872 -> 14413824 B
    assert m.experts.bytes_per_expert == 14413824
    d = 32 * (1 - (28 / 32) ** 32)  # 31.554...
    assert m.bytes() == pytest.approx(2 * 32 * 3072 * 2 + 32 * 32 * 2 + d * 14413824)


def test_aiter_fmoe_g1u1_fp8(moe_tree):
    m = model_for("aiter::fmoe_g1u1")(_one(moe_tree, "aiter::fmoe_g1u1"))
    assert m.compute_spec() == "matrix_fp8" and m.experts.weight_format == "fp8"
    assert m.flops() == 442368  # same routed GEMMs as the BF16 forms
    # per expert: gate [192, 64] fp8 12288 + down [64, 96] 6144 + fc1_scale [192, 1] f32 768
    # + fc2_scale [64, 1] f32 256 = 19456
    assert m.experts.bytes_per_expert == 19456
    # io: input [6, 64] fp8 384 + sorted ids 24·4 + sorted weights 12·4 + expert ids 6·4
    # + num_valid 4 + input_scale [6, 1] f32 24 = 580; out [6, 64] bf16 768
    assert m.bytes() == pytest.approx(580 + 768 + 6.576171875 * 19456)


def test_aiter_ck_two_stages_add_up_to_the_fused_flops(moe_tree):
    s1 = model_for("aiter::ck_moe_stage1")(_one(moe_tree, "aiter::ck_moe_stage1"))
    s2 = model_for("aiter::ck_moe_stage2")(_one(moe_tree, "aiter::ck_moe_stage2"))
    assert s1.flops() == 2 * 6 * 2 * 64 * 192 == 294912  # GEMM 1: H -> 2I
    assert s2.flops() == 2 * 6 * 2 * 96 * 64 == 147456  # GEMM 2: I -> H
    assert s1.flops() + s2.flops() == 442368
    # stage 1: hidden 768 + ids 96 + 24 + 4 + out [6, 2, 96] bf16 2304 + D · w1 [192, 64] bf16
    assert s1.experts.bytes_per_expert == 24576
    assert s1.bytes() == pytest.approx(768 + 124 + 2304 + 6.576171875 * 24576)
    # stage 2: inter [6, 2, 96] 2304 + ids 124 + sorted_weights [12] f32 48 + out 768 + D · w2
    assert s2.experts.bytes_per_expert == 12288
    assert s2.bytes() == pytest.approx(2304 + 124 + 48 + 768 + 6.576171875 * 12288)


def test_vllm_cutlass_moe_mm(moe_tree):
    m = model_for("_C::cutlass_moe_mm")(_one(moe_tree, "_C::cutlass_moe_mm"))
    assert (m.M, m.N, m.K, m.E) == (12, 192, 64, 8) and m.compute_spec() == "matrix_fp8"
    assert m.flops() == 2 * 12 * 192 * 64 == 294912  # first GEMM, T·k = 12 rows
    # a [12, 64] fp8 768 + out [12, 192] bf16 4608 + a_scales 4 + offsets 8·4 + sizes 8·3·4
    # + three strides 8·8 = 4 + 32 + 96 + 192; per expert b [64, 192] fp8 12288 + b_scale 4
    assert m.bytes_per_expert == 12292
    d = 8 * (1 - (7 / 8) ** 12)  # 6.39: 12 uniform picks
    assert m.bytes() == pytest.approx(768 + 4608 + 324 + d * 12292)
    (a,) = m.assumptions()
    assert (a.bytes_min, a.bytes_max) == (768 + 4608 + 324 + 12292, 768 + 4608 + 324 + 8 * 12292)


def test_aiter_fmoe_and_ck_stages_under_expert_parallelism_from_the_model_config():
    # The aiter ops take already-local sorted ids: only --model-config can say E_g. Here the
    # weights hold E_l = 8, the config 32: A = T·k·E_l/E_g = 6·2·8/32 = 3 local assignments.
    from perfreport.read.model_config import parse_model_config

    cfg = parse_model_config({"hidden_size": 64, "num_experts": 32}, "ep.json")
    t = load_tree(str(FIX / "serving_moe.json.gz"), model_config=cfg)
    m = model_for("aiter::fmoe_g1u1")(_one(t, "aiter::fmoe_g1u1"))
    assert (m.ep, m.E_global, m.experts.E) == (True, 32, 8)
    assert m.flops() == 2 * 3 * (64 * 192 + 96 * 64) == 110_592  # a quarter of 442,368
    f_lo, f_hi, _, _ = bounds(m, m.flops(), m.bytes())
    assert (f_lo, f_hi) == (0, 2 * 12 * 18_432)  # 0 … T·min(k, E_l) = 12 pairs
    assert "global 32 from the model config" in m.params()["experts_from"]
    s1 = model_for("aiter::ck_moe_stage1")(_one(t, "aiter::ck_moe_stage1"))
    s2 = model_for("aiter::ck_moe_stage2")(_one(t, "aiter::ck_moe_stage2"))
    assert (s1.flops(), s2.flops()) == (2 * 3 * 64 * 192, 2 * 3 * 96 * 64) == (73_728, 36_864)
    assert bounds(s1, s1.flops(), s1.bytes())[:2] == (0, 2 * 12 * 64 * 192)
