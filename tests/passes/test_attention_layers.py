"""Pass "attention layers": layer index from the position in the step, window from the config."""

from __future__ import annotations

from pathlib import Path

from perfreport.read.model_config import parse_model_config
from perfreport.passes.attention_layers import attention_layers
from perfreport.pipeline import load_tree
from perfreport.tree import Op, TraceTree

FIX = Path(__file__).resolve().parents[2] / "fixtures"
UNIFIED = "vllm::unified_attention_with_output"
STEP = "execute_2_context_0(sq0sk0sqsq0sqsk0)_generation_2(sq2sk300sqsq2sqsk300)"


def _tree(n_steps, per_step, cfg):
    ops, uid = [], 0
    for s in range(n_steps):
        t0 = s * 1000.0
        ops.append(Op(uid, STEP, "user_annotation", 1, 1, t0, 900.0, {}))
        uid += 1
        for k in range(per_step):
            ops.append(Op(uid, UNIFIED, "cpu_op", 1, 1, t0 + 10 + 20 * k, 10.0, {}))
            uid += 1
    t = TraceTree(ops=ops, roots=list(ops), gpu=[], gpu_annotations=[], meta={}, source="synthetic")
    t.model_config = cfg
    return t, [o for o in ops if o.name == UNIFIED]


def _cfg(layers, window=128):
    lt = ["sliding_attention" if i % 2 == 0 else "full_attention" for i in range(layers)]
    return parse_model_config(
        {"hidden_size": 64, "num_hidden_layers": layers, "sliding_window": window, "layer_types": lt}, "test"
    )


def test_position_in_each_step_is_the_layer():
    t, ops = _tree(2, 4, _cfg(4))
    attention_layers(t)
    assert [o.perf_meta["layer_index"] for o in ops] == [0, 1, 2, 3, 0, 1, 2, 3]
    assert [o.perf_meta["sliding_window"] for o in ops] == [128, 0, 128, 0] * 2


def test_two_passes_in_one_step_wrap_and_a_mismatch_writes_nothing():
    t, ops = _tree(1, 8, _cfg(4))  # 8 calls, 4 layers: layer = k mod 4
    attention_layers(t)
    assert [o.perf_meta["layer_index"] for o in ops] == [0, 1, 2, 3, 0, 1, 2, 3]
    t, ops = _tree(1, 6, _cfg(4))  # 6 calls, 4 layers: no honest mapping
    attention_layers(t)
    assert all("layer_index" not in o.perf_meta for o in ops)


def test_without_model_config_nothing_is_written():
    t, ops = _tree(1, 4, None)
    attention_layers(t)
    assert all(not o.perf_meta for o in ops)


def test_vllm_decode_trace_layers_follow_gpt_oss_layer_types():
    tree = load_tree(
        str(FIX / "vllm_decode_graph.json.gz"),
        graph_capture=str(FIX / "vllm_decode_capture"),
        model_config=str(FIX / "gpt_oss_20b_config.json"),
    )
    ops = sorted(tree.ops_named(UNIFIED), key=lambda o: o.ts)
    assert [o.perf_meta["layer_index"] for o in ops] == list(range(24))
    assert [o.perf_meta["sliding_window"] for o in ops] == [128, 0] * 12
    # the sliding layers run the short kernel_unified_attention_2d, the full ones the split 3d
    short = {k.name for o in ops[0::2] for k in o.subtree_kernels()}
    assert short == {"kernel_unified_attention_2d"}


def test_a_recorded_layer_name_wins_over_the_position():
    t, ops = _tree(1, 4, _cfg(4))
    ops[0].args.update({"Concrete Inputs": ["", "", "", "", "'model.layers.3.self_attn.attn'"]})  # its own dict
    attention_layers(t)
    assert ops[0].perf_meta["layer_index"] == 3 and ops[0].perf_meta["sliding_window"] == 0
    assert [o.perf_meta["layer_index"] for o in ops[1:]] == [1, 2, 3]
