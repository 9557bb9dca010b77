"""--model-config: the fields read from a Hugging Face config.json."""

import json

import pytest

from perfreport.errors import BadInput
from perfreport.read.model_config import load_model_config, parse_model_config


def test_moe_fields_and_layer_windows():
    # the shape of a gpt-oss style config: alternating sliding / full layers, experts, MXFP4
    doc = {
        "model_type": "gpt_oss",
        "hidden_size": 2880,
        "intermediate_size": 2880,
        "num_local_experts": 32,
        "num_experts_per_tok": 4,
        "num_hidden_layers": 24,
        "num_attention_heads": 64,
        "num_key_value_heads": 8,
        "head_dim": 64,
        "sliding_window": 128,
        "layer_types": ["sliding_attention", "full_attention"] * 12,
        "quantization_config": {"quant_method": "mxfp4"},
    }
    c = parse_model_config(doc, "cfg.json")
    assert (c.num_experts, c.num_experts_per_tok, c.expert_intermediate_size) == (32, 4, 2880)
    assert c.layer_window(0) == 128 and c.layer_window(1) is None and c.layer_window(2) == 128
    assert c.quantization["quant_method"] == "mxfp4"


def test_nested_text_config_and_qwen_moe_names():
    doc = {
        "model_type": "llava",
        "text_config": {
            "hidden_size": 2048,
            "num_experts": 128,
            "moe_intermediate_size": 768,
            "intermediate_size": 6144,
            "num_experts_per_tok": 8,
        },
    }
    c = parse_model_config(doc, "x")
    assert c.hidden_size == 2048 and c.num_experts == 128 and c.expert_intermediate_size == 768


def test_mistral_window_everywhere_unless_disabled():
    assert parse_model_config({"hidden_size": 8, "sliding_window": 4096}, "x").layer_window(7) == 4096
    off = parse_model_config({"hidden_size": 8, "sliding_window": 4096, "use_sliding_window": False}, "x")
    assert off.layer_window(0) is None


def test_bad_files_are_one_line_errors(tmp_path):
    with pytest.raises(BadInput, match="cannot read model config"):
        load_model_config(tmp_path / "missing.json")
    p = tmp_path / "c.json"
    p.write_text("{not json")
    with pytest.raises(BadInput, match="not valid JSON"):
        load_model_config(p)
    p.write_text(json.dumps([1, 2]))
    with pytest.raises(BadInput, match="not a JSON object"):
        load_model_config(p)
    p.write_text(json.dumps({"vocab_size": 3}))
    with pytest.raises(BadInput, match="no hidden_size"):
        load_model_config(p)
