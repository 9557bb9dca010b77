"""FlashInfer prefill op names (perfreport/models/attention/flashinfer_names.py)."""

from __future__ import annotations

import re

from perfreport.models.attention import flashinfer_names as fin

URI = (
    "batch_prefill_with_kv_cache_dtype_q_bf16_dtype_kv_e4m3_dtype_o_bf16_dtype_idx_i32_"
    "head_dim_qk_128_head_dim_vo_128_posenc_0_use_swa_True_use_logits_cap_False_f16qk_False"
)


def test_parse_uri_fa3_and_aot():
    u = fin.parse_uri(URI + "_sm90::paged_run")
    assert (u["dtype_kv"], u["head_dim_qk"], u["use_swa"], u["backend"]) == ("e4m3", 128, True, "fa3")
    assert fin.parse_uri("flashinfer_kernels::batch_prefill_with_paged_kv_cache_run") is None


def test_parse_uri_v020_one_head_dim():
    name = "flashinfer::" + URI.replace("head_dim_qk_128_head_dim_vo_128", "head_dim_64") + "_ragged_run"
    u = fin.parse_uri(name)
    assert (u["head_dim_qk"], u["head_dim_vo"], u["backend"]) == (64, 64, "fa2")
    assert re.search(fin.RAGGED_RUN_V020, name) and not re.search(fin.RAGGED_RUN, name)
