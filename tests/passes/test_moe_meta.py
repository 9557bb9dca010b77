"""Pass "MoE shapes": perf_meta for vllm::moe_forward from its children and --model-config."""

from pathlib import Path

from perfreport.read.model_config import parse_model_config
from perfreport.models.moe.experts import VllmMoeForward
from perfreport.passes import PASSES
from perfreport.passes.moe_meta import annotate_moe
from perfreport.passes.moe_top_k import annotate_top_k
from perfreport.pipeline import load_tree

FIX = Path(__file__).resolve().parents[2] / "fixtures"
GPT_OSS = {
    "model_type": "gpt_oss",
    "hidden_size": 2880,
    "intermediate_size": 2880,
    "num_local_experts": 32,
    "num_experts_per_tok": 4,
    "quantization_config": {"quant_method": "mxfp4"},
}


def test_declared_writes():
    (p,) = [p for p in PASSES if p.name == "MoE shapes"]
    assert set(p.writes) == {"moe_expert_weights", "moe_config"}
    (p,) = [p for p in PASSES if p.name == "MoE top-k"]
    assert set(p.writes) == {"moe_top_k", "moe_top_k_source"}


def test_children_give_top_k_and_weight_views():
    tree = load_tree(str(FIX / "serving_moe.json.gz"))
    (op,) = tree.ops_named("vllm::moe_forward")
    assert op.perf_meta["moe_top_k"] == 2  # TopK Concrete Inputs[1]
    w13, w2, extra = op.perf_meta["moe_expert_weights"]
    assert w13 == ((8, 32, 192), "unsigned char") and w2 == ((8, 48, 64), "unsigned char")
    assert extra == 0.0 and "moe_config" not in op.perf_meta
    # other ops get nothing
    assert not tree.ops_named("vllm::outplace_fused_experts")[0].perf_meta


def test_model_config_copied():
    tree = load_tree(str(FIX / "serving_moe.json.gz"), passes=False)
    tree.model_config = parse_model_config(GPT_OSS, "gpt-oss.json")
    annotate_moe(tree)
    annotate_top_k(tree)
    (op,) = tree.ops_named("vllm::moe_forward")
    assert op.perf_meta["moe_config"] == {
        "top_k": 4,
        "num_experts": 32,
        "intermediate_size": 2880,
        "weight_format": "mxfp4",
    }
    # the trace's own TopK wins over the config's top-k
    assert VllmMoeForward(op).k == 2


def test_unquantized_config_uses_activation_dtype():
    tree = load_tree(str(FIX / "serving_moe.json.gz"), passes=False)
    tree.model_config = parse_model_config({"hidden_size": 64, "num_experts": 8, "moe_intermediate_size": 96}, "q.json")
    annotate_moe(tree)
    (op,) = tree.ops_named("vllm::moe_forward")
    assert op.perf_meta["moe_config"]["weight_format"] == "bf16"


def test_graph_capture_trace_views():
    tree = load_tree(str(FIX / "vllm_decode_graph.json.gz"), graph_capture=str(FIX / "vllm_decode_capture"))
    ops = tree.ops_named("vllm::moe_forward")
    assert len(ops) == 24
    pm = ops[0].perf_meta
    assert pm["moe_top_k"] == 4
    assert pm["moe_expert_weights"][:2] == (((32, 1536, 5888), "unsigned char"), ((32, 1472, 3072), "unsigned char"))
    assert pm["moe_config"] == {"weight_format": "mxfp4"}  # from the kernel names


def test_no_moe_ops_no_writes():
    tree = load_tree(str(FIX / "inference_rocm_paged_attention.json.gz"))
    assert not any(k.startswith("moe_") for o in tree.ops for k in o.perf_meta)


def test_expert_parallel_views_and_config_on_fused_ops():
    """fixtures/serving_moe_ep.json.gz: router logits [6, 8], local weight views [2, *, *]."""
    tree = load_tree(str(FIX / "serving_moe_ep.json.gz"), passes=False)
    tree.model_config = parse_model_config({"hidden_size": 64, "num_experts": 8}, "ep.json")
    annotate_moe(tree)
    (op,) = tree.ops_named("vllm::moe_forward")
    w13, w2, extra = op.perf_meta["moe_expert_weights"]
    assert (w13[0], w2[0], extra) == ((2, 192, 64), (2, 64, 96), 0.0)
    for fused in tree.ops_named("vllm::outplace_fused_experts") + tree.ops_named("aiter::fused_moe_"):
        assert fused.perf_meta == {"moe_config": {"num_experts": 8}}


def test_config_expert_count_reaches_every_fused_experts_op(tmp_path):
    """Every op the registry gives to FusedExperts (which declares ``needs = ("moe_config",)``)
    gets the model config's num_experts, aiter::ck_moe included; an op whose model does not ask
    for it gets nothing."""
    from perfreport.models.registry import model_for
    from tests.read.kit import read_and_build, x_event

    names = ("aiter::ck_moe", "aiter::fused_moe_", "sglang::outplace_fused_experts", "aten::mm")
    evs = [x_event("cpu_op", n, 10.0 * i, 5.0) for i, n in enumerate(names)]
    _, tree = read_and_build(tmp_path, evs)
    tree.model_config = parse_model_config({"hidden_size": 64, "num_experts": 8}, "ep.json")
    annotate_moe(tree)
    for n in names[:3]:
        assert "moe_config" in getattr(model_for(n), "needs", ()), n
        (op,) = tree.ops_named(n)
        assert op.perf_meta == {"moe_config": {"num_experts": 8}}, n
    assert not tree.ops_named("aten::mm")[0].perf_meta
