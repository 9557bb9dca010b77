"""Inference attention through the whole pipeline: unified table and InferenceAttention sheet."""

from __future__ import annotations

import pytest

from perfreport.pipeline import load_tree
from perfreport.specs import detect_arch, load_arch
from perfreport.tables import build_sheets
from tests.conftest import FIX


def _sheets(path, **kw):
    tree = load_tree(str(path), **kw)
    spec = detect_arch(tree.meta.get("deviceProperties")) or load_arch("mi300x")
    return tree, {s.name: s for s in build_sheets(tree, spec=spec)}


def test_aiter_leaf_replaces_parent_in_unified_table():
    _, sh = _sheets(FIX / "inference_aiter_paged_attention_v1.json.gz")
    uni = sh["unified_perf_summary"].df
    leaf = uni[uni["name"] == "aiter::paged_attention_v1"]
    assert leaf["perf model"].eq("AiterPagedAttentionV1").all() and leaf["count"].sum() == 6
    parent = uni[uni["name"] == "vllm::unified_attention_with_output"]
    assert (parent["perf model"] == "").all()  # excluded by the paged-attn-v1 pass
    ia = sh["InferenceAttention_fwd"].df
    assert {"param: dtype_Q", "param: dtype_KV", "param: d_h_v", "param: g_sk"} <= set(ia.columns)
    fp8 = ia[ia["compute spec"] == "matrix_fp8"]
    assert len(fp8) >= 1
    # FP8 decode hand value (tests/models/attention/test_inference.py): 92,928 B vs BF16 177,664 B
    assert set(ia["data moved (MB)"].round(6)) >= {0.092928, 0.177664}
    assert set(ia["param: dtype_KV_from"]) == {"key_cache (argument 3)"}


def test_rocm_kv_dtype_reaches_parent_row():
    _, sh = _sheets(FIX / "inference_rocm_paged_attention.json.gz")
    ia = sh["InferenceAttention_fwd"].df
    assert set(ia["name"]) == {"vllm::unified_attention_with_output"}
    assert {"c10::Float8_e4m3fnuz", "unsigned char", "c10::BFloat16"} == set(ia["param: dtype_KV"])


def test_vllm_graph_replay_with_capture_matches_reference_attention_row():
    """Reference InferenceAttention_fwd.csv: 0.902529024 GFLOP, 108.08984375 MiB, matrix_bf16."""
    tree, sh = _sheets(FIX / "vllm_decode_graph.json.gz", graph_capture=str(FIX / "vllm_decode_capture"))
    ia = sh["InferenceAttention_fwd"].df
    att = ia[ia["name"] == "vllm::unified_attention_with_output"]
    # the 24 layers alternate two kernel paths (13 µs / 47 µs): the bimodal row is split in two
    assert len(att) == 2 and att["count"].sum() == 24
    for _, row in att.iterrows():
        assert row["GFLOP"] == pytest.approx(0.902529024)
        assert row["data moved (MB)"] * 1e6 == pytest.approx(108.08984375 * 2**20)
        assert row["compute spec"] == "matrix_bf16"
        assert row["param: g_sk"] == 55086 and row["param: d_h_v"] == 64
        assert "bimodal" in row["flags"]
    assert att["time sum (µs)"].sum() == pytest.approx(724.36, abs=0.01)
    uni = sh["unified_perf_summary"].df
    assert uni["time sum (µs)"].sum() == pytest.approx(sum(g.dur for g in tree.gpu))
