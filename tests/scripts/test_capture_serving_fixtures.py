"""scripts/capture_serving_fixtures.py (and capture_moe_ep_fixtures.py, which shares its routing
stand-ins) re-captured into tmp_path: the op names, argument shapes and dtypes the model tests read
from fixtures/serving_*.json.gz must be what the generator writes (tests/scripts/conftest.py
captures; test_capture_scripts.py compares every captured file with the committed one), so the
generator cannot drift from the tests that use its fixtures.

Shapes from the workload constants (scripts/serving_moe_ops.py, scripts/serving_workloads.py):
MoE T 6, H 64, I 96 (2I = 192), E 8, k 2; KV T 5, Hkv 2, D 16, page 4, 6 blocks (24 slots),
MLA latent 32 + rope 8 = 40; quant T 8, H 64, group 32 (64 / 32 = 2 groups per token).
"""

from __future__ import annotations

import pytest

from tests.scripts.kit import ROOT, cpu_ops, load, op

torch = pytest.importorskip("torch")

BF, F32, I32, I64, U8 = "c10::BFloat16", "float", "int", "long int", "unsigned char"
E4M3, E4M3FNUZ = "c10::Float8_e4m3fn", "c10::Float8_e4m3fnuz"

# (family, op name, occurrence, Input Dims, Input type): the inputs the models read
EXPECTED = [
    ("moe", "vllm::moe_forward", 0, [[6, 64], [6, 8], []], [BF, BF, ""]),  # x [T,H], logits [T,E]
    ("moe", "TopK", 0, [[6, 8], [], [], [], [], [], []], [BF, "Scalar", "Scalar", "Scalar", "Scalar", "", ""]),
    ("moe", "SortTokens", 0, [[6, 2], [6, 2], []], [BF, "short int", "Scalar"]),  # [T, k]
    (
        "moe",
        "vllm::outplace_fused_experts",
        0,  # w1 [E,2I,H], w2 [E,H,I]
        [[6, 64], [8, 192, 64], [8, 64, 96], [6, 2], [6, 2]],
        [BF, BF, BF, F32, I32],
    ),
    (
        "moe",
        "vllm::outplace_fused_experts",
        1,  # dense: E 1, k 1
        [[6, 64], [1, 192, 64], [1, 64, 96], [6, 1], [6, 1]],
        [BF, BF, BF, F32, I32],
    ),
    ("moe", "_moe_C::topk_softmax", 0, [[6, 2], [6, 2], [6, 2], [6, 8], []], [F32, I32, I32, F32, "Scalar"]),
    (
        "moe",
        "_moe_C::moe_align_block_size",
        0,  # T·k + E·(4-1) = 36
        [[6, 2], [], [], [36], [9], [1]],
        [I32, "Scalar", "Scalar", I32, I32, I32],
    ),
    (
        "moe",
        "aiter::fmoe_g1u1",
        0,  # 24 sorted ids, 6 blocks of 4
        [[6, 64], [6, 64], [8, 192, 64], [8, 64, 96], [24], [12], [6], [1], [], [6, 1], [8, 192, 1], [8, 64, 1]],
        [BF, E4M3FNUZ, E4M3FNUZ, E4M3FNUZ, I32, F32, I32, I32, "Scalar", F32, F32, F32],
    ),
    (
        "moe",
        "aiter::ck_moe_stage1",
        0,
        [[6, 64], [8, 192, 64], [8, 64, 96], [24], [6], [1], [6, 2, 96], [], [], [], [], [], []],
        [BF, BF, BF, I32, I32, I32, BF, "Scalar", "", "", "", "Scalar", ""],
    ),
    (
        "moe",
        "aiter::ck_moe_stage2",
        0,
        [[6, 2, 96], [8, 192, 64], [8, 64, 96], [24], [6], [1], [6, 64], [], [], [], [], [], [12]],
        [BF, BF, BF, I32, I32, I32, BF, "Scalar", "", "", "", "Scalar", F32],
    ),
    (
        "moe",
        "_C::cutlass_moe_mm",
        0,  # T·k = 12 permuted rows
        [[12, 192], [12, 64], [8, 64, 192], [1], [8, 1, 1], [8], [8, 3], [8], [8], [8], [], []],
        [BF, E4M3, E4M3, F32, F32, I32, I32, I64, I64, I64, "Scalar", "Scalar"],
    ),
    (
        "kv_cache",
        "_C_cache_ops::reshape_and_cache_flash",
        0,  # NHD [6, 4, 2, 16]
        [[5, 2, 16], [5, 2, 16], [6, 4, 2, 16], [6, 4, 2, 16], [5], [], [], []],
        [BF, BF, BF, BF, I64, "", F32, F32],
    ),
    (
        "kv_cache",
        "_C_cache_ops::reshape_and_cache_flash",
        1,  # FP8 cache as uint8
        [[5, 2, 16], [5, 2, 16], [6, 4, 2, 16], [6, 4, 2, 16], [5], [], [], []],
        [BF, BF, U8, U8, I64, "", F32, F32],
    ),
    (
        "kv_cache",
        "_C_cache_ops::reshape_and_cache",
        0,  # K [6,2,16/8,4,8]
        [[5, 2, 16], [5, 2, 16], [6, 2, 2, 4, 8], [6, 2, 16, 4], [5], [], [], []],
        [BF, BF, BF, BF, I64, "", F32, F32],
    ),
    (
        "kv_cache",
        "_C_cache_ops::concat_and_cache_mla",
        0,
        [[5, 32], [5, 8], [6, 4, 40], [5], [], []],
        [BF, BF, BF, I64, "", F32],
    ),
    (
        "kv_cache",
        "sglang::store_cache",
        0,  # 2-d rows: Hkv·D = 32
        [[5, 32], [5, 32], [24, 32], [24, 32], [5], [], [], []],
        [BF, BF, BF, BF, I64, "Scalar", "Scalar", "Scalar"],
    ),
    ("quant", "_C::static_scaled_fp8_quant", 0, [[8, 64], [8, 64], [1]], [E4M3, BF, F32]),
    ("quant", "_C::dynamic_scaled_fp8_quant", 0, [[8, 64], [8, 64], [1]], [E4M3, BF, F32]),
    ("quant", "_C::dynamic_per_token_scaled_fp8_quant", 0, [[8, 64], [8, 64], [8, 1], []], [E4M3, BF, F32, ""]),
    (
        "quant",
        "_C::per_token_group_fp8_quant",
        0,
        [[8, 64], [8, 64], [8, 2], [], [], [], [], []],
        [BF, E4M3, F32, "Scalar", "Scalar", "Scalar", "Scalar", "Scalar"],
    ),
    ("inductor", "triton_poi_fused_add_mul_0", 0, [[16, 32], [32], [16, 32], []], [BF, BF, BF, "Scalar"]),
    ("inductor", "triton_red_fused__to_copy_mean_pow_1", 0, [[16, 32], [16, 1], [], []], [BF, F32, "Scalar", "Scalar"]),
    ("inductor", "triton_per_fused__softmax_2", 0, [[16, 32], [], []], [F32, "Scalar", "Scalar"]),
    (
        "inductor",
        "triton_poi_fused__to_copy_embedding_3",
        0,
        [[16], [1000, 32], [16, 32], []],
        [I64, F32, BF, "Scalar"],
    ),
    ("inductor", "triton_tem_fused_mm_4", 0, [[16, 32], [32, 24], [16, 24]], [BF, BF, BF]),
    (
        "vision",
        "aten::max_pool2d_with_indices",
        0,
        [[2, 4, 8, 8], [], [], [], [], []],
        [F32, "ScalarList", "ScalarList", "ScalarList", "ScalarList", "Scalar"],
    ),
    (
        "vision",
        "aten::max_pool2d_with_indices_backward",
        0,  # (8 + 2 - 3) // 2 + 1 = 4
        [[2, 4, 4, 4], [2, 4, 8, 8], [], [], [], [], [], [2, 4, 4, 4]],
        [F32, F32, "ScalarList", "ScalarList", "ScalarList", "ScalarList", "Scalar", I64],
    ),
    ("vision", "aten::upsample_nearest2d", 0, [[2, 4, 8, 8], [], []], [F32, "", "ScalarList"]),
    ("vision", "aten::upsample_nearest1d", 0, [[2, 4, 5], [], []], [F32, "ScalarList", ""]),
    (
        "vision",
        "aten::miopen_batch_norm_backward",
        0,
        [[2, 4, 8, 8], [2, 4, 8, 8], [4], [], [], [4], [4], []],
        [F32, F32, F32, "", "", F32, F32, "Scalar"],
    ),
    (
        "vision",
        "aiter::_groupnorm_run",
        0,
        [[2, 8, 4, 4], [64], [2, 8, 4, 4], [], [8], [8], []],
        [BF, F32, BF, "Scalar", BF, BF, "Scalar"],
    ),
]
# Concrete Inputs the models read (k, block size, group size, FP8 bounds, pooling window)
CONCRETE = [
    ("moe", "TopK", 0, 1, "2"),
    ("moe", "SortTokens", 0, 2, "8"),
    ("moe", "_moe_C::moe_align_block_size", 0, 1, "8"),
    ("moe", "_moe_C::moe_align_block_size", 0, 2, "4"),
    ("moe", "aiter::fmoe_g1u1", 0, 8, "2"),
    ("moe", "aiter::ck_moe_stage1", 0, 11, "4"),
    ("kv_cache", "sglang::store_cache", 0, 5, "64"),  # row_bytes 32·2
    ("kv_cache", "sglang::store_cache", 0, 7, "24"),  # size_limit 6·4
    ("quant", "_C::per_token_group_fp8_quant", 0, 3, "32"),
    ("quant", "_C::per_token_group_fp8_quant", 0, 6, "448."),
    ("vision", "aten::max_pool2d_with_indices", 0, 1, "[3, 3]"),
    ("vision", "aten::max_pool2d_with_indices", 0, 2, "[2, 2]"),
    ("vision", "aten::upsample_nearest1d", 0, 1, "[9]"),
]
FAMILIES = sorted({f for f, *_ in EXPECTED})


def test_every_family_is_written_with_its_metadata(captured):
    for fam in FAMILIES:
        trace = load(captured / f"serving_{fam}.json.gz")
        assert trace["traceName"] == f"serving_{fam}.json.gz"
        assert trace["metadata"] == {
            "generator": "scripts/capture_serving_fixtures.py",
            "family": fam,
            "torch": torch.__version__,
        }


@pytest.mark.parametrize("where", ["captured", "committed"])
def test_the_ops_the_models_read_have_their_shapes(where, captured):
    base = captured if where == "captured" else ROOT / "fixtures"
    ops = {fam: cpu_ops(base / f"serving_{fam}.json.gz") for fam in FAMILIES}
    for fam, name, i, dims, types in EXPECTED:
        args = op(ops[fam], name, i)["args"]
        assert (args["Input Dims"], args["Input type"]) == (dims, types), (where, name, i)
    for fam, name, i, pos, value in CONCRETE:
        assert op(ops[fam], name, i)["args"]["Concrete Inputs"][pos] == value, (where, name, pos)


def test_moe_forward_shows_the_packed_mxfp4_weight_views(captured):
    """The pass reads E from views of [E, *, *] weights under moe_forward: uint8 [E, H/2, 2I]
    = [8, 32, 192] and [E, I/2, H] = [8, 48, 64]."""
    ops = cpu_ops(captured / "serving_moe.json.gz")
    fwd = op(ops, "vllm::moe_forward", 0)
    inside = [
        e
        for e in ops
        if e["tid"] == fwd["tid"]
        and e is not fwd
        and fwd["ts"] <= e["ts"]
        and e["ts"] + e["dur"] <= fwd["ts"] + fwd["dur"]
    ]
    views = [(e["args"]["Input Dims"][0], e["args"]["Input type"][0]) for e in inside if e["name"] == "aten::view"]
    assert ([8, 32, 192], U8) in views and ([8, 48, 64], U8) in views
    assert [e["name"] for e in inside if e["name"] in ("TopK", "SortTokens")] == ["TopK", "SortTokens"]
