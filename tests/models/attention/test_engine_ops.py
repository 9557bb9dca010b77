"""vLLM unified attention: the KV-cache dtype is never the new K/V's (hand values).

Shapes of the shared vLLM decode step (gpt-oss-20b, TP1): query [32, 64, 64], key/value
[32, 8, 64]; 32 decode requests over 55,086 KV tokens. Per new token Q read + O written
64*64*2 = 8,192 elements, its K/V 8*64*2 = 1,024; cached (55,086 - 32)*1,024 = 56,375,296.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from perfreport.models.attention.engine_ops import VllmUnifiedAttention
from perfreport.models.base import bounds
from perfreport.stats.iteration_formats import parse_iteration
from tests.kit import X, cpu_op, shape_args, write_trace

BF16, U8 = "c10::BFloat16", "unsigned char"
UNIFIED = "vllm::unified_attention_with_output"
ANN = "execute_32_context_0(sq0sk0sqsq0sqsk0)_generation_32(sq32sk55086sqsq32sqsk55086)"
Q, KV = [32, 64, 64], [32, 8, 64]
FIX = Path(__file__).resolve().parents[3] / "fixtures"


def _unified(dummy=None, meta=None, n_args=8):
    """unified_attention_with_output(query, key, value, output, layer_name, output_scale,
    output_block_scale, kv_cache_dummy_dep); ``dummy``: the dep's dtype (None: not passed)."""
    dims = [Q, KV, KV, Q, [], [], [], [0] if dummy else []][:n_args]
    types = [BF16] * 4 + ["", "", "", dummy or ""]
    return VllmUnifiedAttention(
        cpu_op(UNIFIED, dims, types[:n_args], None, {"iteration": parse_iteration(ANN), **(meta or {})})
    )


def test_fp8_cache_from_the_kv_cache_dummy_dep():
    # The dummy is unified_kv_cache_update's torch.empty(0, dtype=kv_cache.dtype): the cache
    # is uint8 (vLLM's FP8 storage). Before: dtype_KV was the new key's BF16, 113,340,416 B.
    # The update op wrote the new tokens, so this op reads every K/V from the cache:
    # Q/O 32*8,192 = 262,144 elements at 2 B + (32*1,024 + 56,375,296) at 1 B = 56,932,352 B.
    m = _unified(dummy=U8)
    assert (m.dtype_KV, m.dtype_new_KV, m.bpe_KV) == (U8, U8, 1)
    assert m.bytes() == 262_144 * 2 + 32_768 + 56_375_296 == 56_932_352
    assert m.flops() == 902_529_024  # 64*128*2*55,086: unchanged
    assert m.compute_spec() == "matrix_bf16"  # the kernel dequantizes: query-dtype MMAs
    assert m.params()["dtype_KV_from"].startswith("kv_cache_dummy_dep (argument 7)")
    assert m.assumptions() == []  # the trace shows the cache dtype: nothing assumed
    # a BF16 cache through the same argument: the reference row's 113,340,416 B
    assert _unified(dummy=BF16).bytes() == 113_340_416


def test_unknown_cache_dtype_is_an_assumption_with_bounds():
    # vLLM before kv_cache_dummy_dep (5 arguments) and no op under it that takes the cache:
    # the point figure takes the new key's BF16 (113,340,416 B, as before) but says so, and
    # the lower bound is a 1-byte cache: (262,144 + 32,768)*2 + 56,375,296 = 56,965,120 B.
    m = _unified(n_args=5)
    assert m.kv_unknown and m.dtype_KV == BF16 and m.bytes() == 113_340_416
    assert "not in the trace" in m.params()["dtype_KV_from"]
    (a,) = m.assumptions()
    assert "KV-cache dtype not in the trace" in a.text and "FP8" in a.text
    assert (a.bytes_min, a.bytes_max) == (56_965_120, 113_340_416)
    assert a.flops_min is None
    assert bounds(m, m.flops(), m.bytes())[2:] == (56_965_120, 113_340_416)


def test_a_leaf_that_takes_the_cache_wins():
    m = _unified(n_args=5, meta={"KCache_dtype": U8, "KCache_source": "key_cache of X (argument 2) under this op"})
    # the op writes the new K/V itself (no dummy): they count at BF16, the cache at 1 B
    assert (m.dtype_KV, m.dtype_new_KV, m.kv_unknown) == (U8, BF16, False)
    assert m.bytes() == (262_144 + 32_768) * 2 + 56_375_296 == 56_965_120
    assert m.params()["dtype_KV_from"] == "key_cache of X (argument 2) under this op"
    assert m.params()["dtype_new_KV"] == BF16


def test_cache_write_under_the_op_gives_its_dtype(tmp_path):
    """A trace of the older vLLM form: reshape_and_cache_flash(key, value, key_cache,
    value_cache, slot_mapping, kv_cache_dtype, k_scale, v_scale) inside the attention op,
    uint8 caches (the kv_cache_dtype string is recorded as '')."""
    write = shape_args(
        [KV, KV, [100, 16, 8, 64], [100, 16, 8, 64], [32], [], [1], [1]],
        [BF16, BF16, U8, U8, "long int", "", "float", "float"],
    )
    attn = shape_args([Q, KV, KV, Q, []], [BF16] * 4 + [""])
    ev = [
        X("user_annotation", ANN, 0, 100),
        X("cpu_op", UNIFIED, 10, 50, **attn),
        X("cpu_op", "_C_cache_ops::reshape_and_cache_flash", 12, 5, **write),
    ]
    load_tree = pytest.importorskip("perfreport.pipeline").load_tree
    tree = load_tree(write_trace(tmp_path, ev))
    (op,) = tree.ops_named(UNIFIED)
    assert op.perf_meta["KCache_dtype"] == U8
    m = VllmUnifiedAttention(op)
    assert m.params()["dtype_KV_from"] == (
        "key_cache of _C_cache_ops::reshape_and_cache_flash (argument 2) under this op"
    )
    assert m.bytes() == 56_965_120 and m.assumptions() == []


def test_shared_vllm_capture_reads_the_dummy():
    """The real vLLM decode capture (gpt-oss-20b, MI300X): every unified_attention_with_output
    records kv_cache_dummy_dep [0] c10::BFloat16, and a sibling unified_kv_cache_update holds
    reshape_and_cache_flash with BF16 caches: the two agree; figures are the BF16 ones."""
    load_tree = pytest.importorskip("perfreport.pipeline").load_tree
    tree = load_tree(str(FIX / "vllm_decode_graph.json.gz"), graph_capture=str(FIX / "vllm_decode_capture"))
    ops = tree.ops_named(UNIFIED)
    assert ops
    writes = tree.ops_named("_C_cache_ops::reshape_and_cache_flash")
    assert writes and {w.args["Input type"][2] for w in writes} == {BF16}
    for op in ops:
        assert op.args["Input Dims"][7] == [0] and op.args["Input type"][7] == BF16
        m = VllmUnifiedAttention(op) if "iteration" in op.perf_meta else None
        if m is not None:
            assert m.dtype_KV == BF16 and m.params()["dtype_KV_from"].startswith("kv_cache_dummy_dep")
            assert not any("KV-cache dtype" in a.text for a in m.assumptions())


def test_fp8_query_with_a_bf16_output():
    """vLLM with an FP8 cache quantizes the query before the op (Attention.forward:
    ``query, _ = self.query_quant(query, self._q_scale)``) but allocates the output at the
    model dtype: Q read at 1 B, O written at 2 B (was 1 B, the query's), uint8 cache.
    Q 32*64*64 = 131,072 at 1 B + O 131,072 at 2 B + (32,768 + 56,375,296) at 1 B = 56,801,280 B."""
    F8 = "c10::Float8_e4m3fn"
    dims = [Q, KV, KV, Q, [], [], [], [0]]
    types = [F8, BF16, BF16, BF16, "", "", "", U8]
    m = VllmUnifiedAttention(cpu_op(UNIFIED, dims, types, None, {"iteration": parse_iteration(ANN)}))
    assert (m.dtype_Q, m.dtype_O, m.dtype_KV) == (F8, BF16, U8)
    assert m.bytes() == 131_072 + 131_072 * 2 + 32_768 + 56_375_296 == 56_801_280
    assert m.params()["dtype_O"] == BF16
    assert m.compute_spec() == "matrix_fp8"  # FP8 q on an FP8 cache: FP8 MMAs
