"""--model-config: the fields read from a Hugging Face config.json."""

import json
import re

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


@pytest.mark.parametrize(
    "fields, needle",
    [
        ({"num_local_experts": -8}, "num_local_experts must be a positive whole number, not -8"),
        ({"num_experts": "8"}, "num_experts must be a whole number, not '8'"),
        ({"num_experts_per_tok": True}, "num_experts_per_tok must be a whole number, not True"),
        ({"num_local_experts": 4, "num_experts_per_tok": 8}, "8 experts per token is more than the 4 experts"),
        ({"num_attention_heads": 16, "num_key_value_heads": 3}, "not a multiple of num_key_value_heads 3"),
        ({"head_dim": 2.5}, "head_dim must be a whole number, not 2.5"),
        ({"sliding_window": -1}, "sliding_window must be a positive whole number"),
    ],
)
def test_impossible_fields_are_named(fields, needle):
    with pytest.raises(BadInput, match=re.escape(needle)):
        parse_model_config({"hidden_size": 64, **fields}, "c.json")


def test_zero_and_null_mean_not_given_and_two_problems_share_one_line():
    cfg = parse_model_config({"hidden_size": 64, "num_experts": 0, "head_dim": None, "num_hidden_layers": 4.0}, "c")
    assert cfg.num_experts is None and cfg.head_dim is None and cfg.num_hidden_layers == 4
    with pytest.raises(BadInput) as e:
        parse_model_config({"hidden_size": 64, "head_dim": -1, "num_hidden_layers": "many"}, "c.json")
    assert "head_dim" in str(e.value) and "num_hidden_layers" in str(e.value) and "\n" not in str(e.value)


def test_size_limit_is_reported_as_such(tmp_path):
    p = tmp_path / "big.json"
    p.write_bytes(b'{"hidden_size": 1, "x": "' + b"y" * (17 << 20) + b'"}')
    with pytest.raises(BadInput, match="larger than 16 MiB"):
        load_model_config(p)
