"""Expert parallelism in the MoE models (models/moe/ep.py): the uniform-routing formulas by
hand and by enumeration, the captured EP fixture (fixtures/serving_moe_ep.json.gz, written
by scripts/capture_moe_ep_fixtures.py: one rank holding experts 2 and 3 of 8, T 6, H 64,
I 96, k 2, BF16) model by model and analyzed end to end, and the model-config cases."""

from itertools import combinations
from pathlib import Path

import pytest

from perfreport.read.model_config import parse_model_config
from perfreport.models.moe import ep
from perfreport.models.base import bounds
from perfreport.models.moe.experts import FusedExperts, VllmMoeForward
from perfreport.models.registry import model_for
from perfreport.pipeline import analyze, load_tree
from perfreport.specs import load_arch, roofline

FIX = Path(__file__).resolve().parents[3] / "fixtures" / "serving_moe_ep.json.gz"
T, H, I, K, E_G, E_L = 6, 64, 96, 2, 8, 2
PER_EXPERT = (2 * I * H + H * I) * 2  # w13 [192, 64] + w2 [64, 96] BF16 = 36,864 B
D = 2 * (1 - 0.75**6)  # E_l·(1 − (1 − k/E_g)^T) = 1.64404296875
TOKENS = 6 * (1 - 15 / 28)  # T·(1 − C(6,2)/C(8,2)) = 78/28 = 2.7857...


def test_formulas_by_hand():
    assert ep.expected_assignments(6, 2, 2, 8) == 6 * 2 * 2 / 8 == 3.0
    assert ep.assignment_bounds(6, 2, 2, 8) == (0, 12)  # 6·max(0, 2 − 6), 6·min(2, 2)
    assert ep.assignment_bounds(6, 4, 6, 8) == (12, 24)  # every token has ≥ 4 − 2 local
    assert ep.expected_tokens(6, 2, 2, 8) == pytest.approx(78 / 28)
    assert ep.token_bounds(6, 2, 2, 8) == (0, 6) and ep.token_bounds(6, 4, 6, 8) == (6, 6)
    assert ep.expected_distinct_local(6, 2, 2, 8) == pytest.approx(1.64404296875)
    assert ep.distinct_local_bounds(6, 2, 2, 8) == (0, 2)  # min(2, 12)
    assert ep.distinct_local_bounds(1, 4, 6, 8) == (2, 4)  # one token: 2 … min(6, 4)


def test_formulas_against_enumeration():
    """One token, all C(8, 2) = 28 equally likely pick sets; local experts {2, 3}."""
    sets = list(combinations(range(8), 2))
    local = [len({2, 3} & set(s)) for s in sets]
    assert sum(local) / len(sets) == ep.expected_assignments(1, 2, 2, 8)  # 14/28 = 0.5
    assert sum(n > 0 for n in local) / len(sets) == pytest.approx(ep.expected_tokens(1, 2, 2, 8))
    # a given local expert is in 7 of the 28 sets: P = k/E_g = 2/8
    assert sum(2 in s for s in sets) / len(sets) == 2 / 8
    assert (min(local), max(local)) == ep.assignment_bounds(1, 2, 2, 8)


@pytest.mark.parametrize("T,k,E", [(6, 2, 8), (32, 4, 32), (1, 1, 1), (3, 2, 2)])
def test_one_rank_reduces_to_the_single_rank_formulas(T, k, E):
    from perfreport.models.moe.experts import distinct_bounds, expected_distinct

    assert ep.expected_assignments(T, k, E, E) == T * k
    assert ep.assignment_bounds(T, k, E, E) == (T * k, T * k)
    assert ep.expected_tokens(T, k, E, E) == T and ep.token_bounds(T, k, E, E) == (T, T)
    # the single-rank closed forms (models/moe/experts.py delegates to these): E·(1 − (1 − k/E)^T)
    # expected, bounds k (all tokens agree) … min(E, T·k) (all picks distinct)
    assert ep.expected_distinct_local(T, k, E, E) == pytest.approx(E * (1 - (1 - k / E) ** T))
    assert expected_distinct(E, k, T) == ep.expected_distinct_local(T, k, E, E)
    assert ep.distinct_local_bounds(T, k, E, E) == distinct_bounds(E, k, T) == (min(k, E), min(E, T * k))


@pytest.fixture(scope="module")
def tree():
    return load_tree(str(FIX))


def _check_ep_model(m, io_once):
    """io_once: bytes of the routing tensors read in full (besides hidden states and output)."""
    assert (m.T, m.k, m.experts.E, m.E_global, m.ep) == (6, 2, 2, 8, True)
    # FLOPs = 2·A·(H·2I + I·H), A = 6·2·2/8 = 3: 2·3·(64·192 + 96·64) = 6·18,432 = 110,592
    assert m.flops() == 110_592
    # x [6, 64] BF16 768 B read for the tokens with a local pick, out 768 B written whole
    assert m.bytes() == pytest.approx(io_once + 768 + 768 * TOKENS / 6 + D * PER_EXPERT)
    f_lo, f_hi, b_lo, b_hi = bounds(m, m.flops(), m.bytes())
    assert (f_lo, f_hi) == (0, 2 * 12 * 18_432)  # 0 … T·min(k, E_l) = 12 pairs
    assert b_lo == pytest.approx(io_once + 768)  # no token, no expert of this rank
    assert b_hi == pytest.approx(io_once + 768 + 768 + 2 * PER_EXPERT)
    a, d = m.assumptions()
    assert "2 of 8 experts" in a.text and "3.00 expected" in a.text and "bounds 0 … 12" in a.text
    assert "1.64 expected" in d.text and "bounds 0 … 2" in d.text


def test_vllm_moe_forward_local_weight_views(tree):
    (op,) = tree.ops_named("vllm::moe_forward")
    w13, w2, extra = op.perf_meta["moe_expert_weights"]  # [E_l, *, *] views, E_l < E_g
    assert w13 == ((2, 192, 64), "c10::BFloat16") and w2 == ((2, 64, 96), "c10::BFloat16")
    m = VllmMoeForward(op)
    _check_ep_model(m, 6 * 8 * 2)  # router logits [6, 8] BF16 96 B
    assert m.params()["experts_from"] == ("local 2 from the expert weight views, global 8 from the router logits")


def test_vllm_fused_experts_expert_map(tree):
    m = FusedExperts(tree.ops_named("vllm::outplace_fused_experts")[0])
    # topk_weights [6, 2] f32 48 + topk_ids [6, 2] int32 48 + expert_map [8] int32 32
    _check_ep_model(m, 48 + 48 + 32)
    assert "expert_map's length" in m.params()["experts_from"]


def test_aiter_fused_moe_expert_mask(tree):
    m = model_for("aiter::fused_moe_")(tree.ops_named("aiter::fused_moe_")[0])
    _check_ep_model(m, 48 + 48 + 32)  # expert_mask [8] int32 32 B
    assert "expert_mask's length" in m.params()["experts_from"]


def test_without_expert_map_the_weights_are_all_experts(tree):
    """No expert_map, no config: nothing says E_g, so today's single-rank figures."""
    m = FusedExperts(tree.ops_named("vllm::outplace_fused_experts")[1])
    assert not m.ep and m.flops() == 2 * 6 * 2 * 18_432 == 442_368
    # D = 2·(1 − 0^6) = 2 experts, both read: 48 + 48 + 768 + 768 + 2·36,864 = 75,360
    assert m.bytes() == 75_360 and len(m.assumptions()) == 1


def test_model_config_gives_the_global_count():
    cfg = parse_model_config(
        {"hidden_size": 64, "num_experts": 8, "num_experts_per_tok": 2, "moe_intermediate_size": 96}, "ep.json"
    )
    rows = analyze(str(FIX), arch="h100_sxm", model_config=cfg).sheet("MoE").records()
    (row,) = [
        r
        for r in rows
        if r["name"] == "vllm::outplace_fused_experts" and "model config" in (r["param: experts_from"] or "")
    ]
    assert row["param: experts_from"] == (
        "local 2 from the weights (the trace wins), global 8 from the model config (num_experts)"
    )
    assert row["GFLOP"] == pytest.approx(110_592e-9)
    # io without expert_map: 48 + 48 + out 768 + x 768·TOKENS/6 + D·36,864
    assert row["data moved (MB)"] == pytest.approx((96 + 768 + 768 * TOKENS / 6 + D * PER_EXPERT) * 1e-6)


def test_model_config_disagreeing_with_the_router_logits(tree):
    cfg = parse_model_config({"hidden_size": 64, "num_experts": 16}, "bad.json")
    t = load_tree(str(FIX), model_config=cfg)
    m = VllmMoeForward(t.ops_named("vllm::moe_forward")[0])
    assert m.E_global == 8 and m.flops() == 110_592  # the trace's router logits win
    assert "model config num_experts 16 disagrees with the router logits' 8" in m.params()["experts_from"]


def test_analyze_row_has_roofline_and_its_range():
    spec = load_arch("h100_sxm")
    rows = {r["name"]: r for r in analyze(str(FIX), arch="h100_sxm").sheet("MoE").records()}
    r = rows["vllm::moe_forward"]
    point = 96 + 768 + 768 * TOKENS / 6 + D * PER_EXPERT
    assert r["GFLOP"] == pytest.approx(110_592e-9) and r["data moved (MB)"] == pytest.approx(point * 1e-6)
    assert r["roofline time (µs)"] == pytest.approx(roofline(spec, 110_592, point, "matrix_bf16")[0])
    lo = roofline(spec, 0, 96 + 768, "matrix_bf16")[0]
    hi = roofline(spec, 442_368, 96 + 768 + 768 + 2 * PER_EXPERT, "matrix_bf16")[0]
    assert r["roofline time min (µs)"] == pytest.approx(lo)
    assert r["roofline time max (µs)"] == pytest.approx(hi)
    assert lo < r["roofline time (µs)"] < hi
    assert r["flags"].count("assumption:") == 2 and "expert parallelism, 2 of 8" in r["flags"]


def _fake(name, dims, types, concrete):
    from types import SimpleNamespace

    return SimpleNamespace(
        name=name, perf_meta={}, args={"Input Dims": dims, "Input type": types, "Concrete Inputs": concrete}
    )


HEAD5 = ([[6, 64], [2, 192, 64], [2, 64, 96], [6, 2], [6, 2]], ["c10::BFloat16"] * 3 + ["float", "int"])


def test_only_the_map_arguments_give_the_global_count():
    from perfreport.models.moe import ep as moe_ep  # aiter: expert_mask None, num_local_tokens [1] int32 at 14 -> no EP

    dims = HEAD5[0] + [[]] * 9 + [[1]]
    types = HEAD5[1] + [""] * 9 + ["int"]
    op = _fake("aiter::fused_moe_", dims, types, [""] * 15)
    assert moe_ep.expert_map_arg(op, 2) is None and not FusedExperts(op).ep
    # vLLM: a 1-d int tensor right after the int global_num_experts is the map ...
    dims = HEAD5[0] + [[]] * 8 + [[8]]
    types = HEAD5[1] + [""] + ["Scalar"] * 7 + ["int"]
    ci = [""] * 6 + ["False"] * 6 + ["8", ""]
    assert moe_ep.expert_map_arg(_fake("vllm::outplace_fused_experts", dims, types, ci), 2)[0] == 13
    # ... but not without that int before it, nor when shorter than the local count
    ci_none = [""] * 6 + ["False"] * 6 + ["", ""]
    assert moe_ep.expert_map_arg(_fake("vllm::outplace_fused_experts", dims, types, ci_none), 2) is None
    assert moe_ep.expert_map_arg(_fake("vllm::outplace_fused_experts", dims, types, ci), 9) is None
