"""InferenceAttention models: hand values, split Q/KV bytes, layouts, precision."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from perfreport.errors import ModelError
from perfreport.models import registry
from perfreport.models.attention.engine_ops import (
    AiterPagedAttentionV1,
    PerfreportPagedAttentionDecode,
    SglangPagedAttentionRagged,
    VllmUnifiedAttention,
)
from perfreport.models.attention.inference import (
    InferenceAttention,
)
from perfreport.stats.chunks import chunk_stats
from perfreport.stats.iteration_formats import parse_iteration
from tests.kit import cpu_op

BF16, FNUZ, U8 = "c10::BFloat16", "c10::Float8_e4m3fnuz", "unsigned char"
FIX = Path(__file__).resolve().parents[3] / "fixtures"


def _op(name, dims, types, stats, concrete=None, meta=None):
    if isinstance(stats, str):
        stats = parse_iteration(stats)
    return cpu_op(name, dims, types, concrete, {**({"iteration": stats} if stats is not None else {}), **(meta or {})})


def _decode_stats(b, q, ctx):
    """b sequences, q new tokens each, KV length ctx (including the new tokens)."""
    return dict(
        c_sq=0,
        c_sk=0,
        c_sqsq=0,
        c_sqsk=0,
        c_reqs=0,
        g_reqs=b,
        g_sq=b * q,
        g_sk=b * ctx,
        g_sqsq=b * q * q,
        g_sqsk=b * q * ctx,
    )


def _bench(dtype_kv, b=32, q=4, ctx=65536, hq=16, hkv=1, dk=192, dv=128, page=64):
    blocks = b * ctx // page
    dims = [
        [b * q, hq, dv],
        [b * q, hq, dk],
        [blocks, page, hkv, dk],
        [blocks, page, hkv, dv],
        [b, ctx // page],
        [b],
        [1],
        [1],
        [],
        [],
    ]
    types = [BF16, BF16, dtype_kv, dtype_kv, "int", "int", "float", "float", "Scalar", ""]
    return PerfreportPagedAttentionDecode(
        _op("perfreport::paged_attention_decode", dims, types, _decode_stats(b, q, ctx))
    )


def test_fp8_decode_row_hand_value_is_half_of_bf16():
    # Seed shape: B 32, q_len 4, ctx 64K, 16:1 GQA, Dk 192, Dv 128.
    # g_sq = 128, g_sk = 32*65536 = 2,097,152, g_sqsk = 32*4*65536 = 8,388,608
    # gen_elems_q      = 128*16*192 = 393,216 (Q read), gen_elems_o = 128*16*128 = 262,144 (O)
    # gen_elems_new_kv = 128*1*(192 + 128) = 40,960 (the new tokens' K/V, in the cache)
    # gen_elems_kv     = (2,097,152 - 128)*1*(192 + 128) = 671,047,680
    # BF16: (655,360 + 40,960 + 671,047,680)*2 = 1,343,488,000 B (1.34 GB)
    # FP8 : 655,360*2 + (40,960 + 671,047,680)*1 = 672,399,360 B (0.67 GB): 0.5005 of BF16
    # (the op reads the new tokens' K/V from the FP8 cache it takes: 1 byte, not the query's 2)
    # FLOPs = 16*(192 + 128)*2*8,388,608 = 85,899,345,920
    m8, m16 = _bench(U8), _bench(BF16)
    assert m8.byte_terms() == {
        "ctx_elems_q": 0,
        "ctx_elems_o": 0,
        "ctx_elems_new_kv": 0,
        "ctx_elems_kv": 0,
        "gen_elems_q": 393_216,
        "gen_elems_o": 262_144,
        "gen_elems_new_kv": 40_960,
        "gen_elems_kv": 671_047_680,
        "bpe_Q": 2,
        "bpe_O": 2,
        "bpe_new_KV": 1,
        "bpe_KV": 1,
    }
    assert m8.bytes() == 672_399_360
    assert m8.params()["dtype_KV_from"] == "key_cache (argument 2)" and not m8.assumptions()
    assert m16.bytes() == 1_343_488_000
    assert 0.50 < m8.bytes() / m16.bytes() < 0.501
    assert m8.flops() == m16.flops() == 85_899_345_920
    assert m8.params()["B"] == 32 and m8.params()["d_h_v"] == 128
    # our kernel dequantizes FP8 to 16 bits in registers: MMAs (and the peak) are BF16
    assert m8.compute_spec() == "matrix_bf16"


def test_bench_5d_layout():
    dims = [[8, 8, 128], [8, 8, 192], [40, 2, 12, 64, 16], [40, 2, 128, 64], [8, 5], [8], [1], [1], [], []]
    m = PerfreportPagedAttentionDecode(
        _op("perfreport::paged_attention_decode", dims, [BF16, BF16, FNUZ, FNUZ], _decode_stats(8, 1, 300))
    )
    assert (m.H_KV, m.d_h_qk, m.d_h_v, m.kv_layout, m.bpe_KV) == (2, 192, 128, "5D", 1)


def _aiter(k_shape, v_shape, kv_type, stats=None):
    dims = [
        [4, 8, 64],
        [64],
        [4, 8, 64],
        k_shape,
        v_shape,
        [],
        [4, 9],
        [5],
        [4],
        [],
        [],
        [],
        [],
        [],
        [1],
        [1],
        [],
        [],
        [],
        [],
    ]
    types = [BF16, U8, BF16, kv_type, kv_type] + ["Scalar"] * 15
    return AiterPagedAttentionV1(
        _op(
            "aiter::paged_attention_v1",
            dims,
            types,
            stats or "execute_4_context_0(sq0sk0sqsq0sqsk0)_generation_4(sq4sk331sqsq4sqsk331)",
        )
    )


@pytest.mark.parametrize(
    "kv_type,spec,nbytes",
    [
        # H_Q 8, H_KV 2, D 64; g_sq 4, g_sk 331: gen_q = 4*8*64*2 = 4,096 (Q, O),
        # gen_new_kv = 4*2*128 = 1,024, gen_kv = (331 - 4)*2*128 = 83,712;
        # BF16 (4,096 + 1,024 + 83,712)*2 = 177,664; FP8 4,096*2 + 1,024 + 83,712 = 92,928
        # (every K/V element, the new tokens' too, is read from the cache: key_cache's dtype).
        # FLOPs 8*128*2*331 = 677,888.
        (BF16, "matrix_bf16", 177_664),
        (FNUZ, "matrix_fp8", 92_928),
        (U8, "matrix_fp8", 92_928),
    ],
)
def test_aiter_leaf_bytes_and_compute_spec(kv_type, spec, nbytes):
    m = _aiter([40, 2, 16, 64], [40, 2, 16, 64], kv_type)
    assert m.bytes() == nbytes and m.flops() == 677_888
    assert m.compute_spec() == spec
    assert (m.dtype_Q, m.dtype_KV, m.H_KV, m.kv_layout, m.params()["B"]) == (BF16, kv_type, 2, "HND", 4)


def test_aiter_layouts():
    assert _aiter([40, 16, 2, 64], [40, 16, 2, 64], U8).kv_layout == "NHD"
    m = _aiter([40, 4, 8, 64], [40, 4, 8, 64], BF16)  # 4 and 8 both divide H_Q = 8
    assert (m.kv_layout, m.H_KV) == ("HND (assumed)", 4)
    dims = [[4, 8, 64], [64], [4, 8, 64], [40, 4, 8, 64], [40, 4, 8, 64]] + [[]] * 15
    ci = [""] * 12 + ["NHD"] + [""] * 7  # a trace that records the layout string
    m = AiterPagedAttentionV1(
        _op("aiter::paged_attention_v1", dims, [BF16, U8] + [BF16] * 3, _decode_stats(4, 1, 100), concrete=ci)
    )
    assert (m.kv_layout, m.H_KV) == ("NHD", 8)


def test_fp8_string_names_precision():
    dims = [[4, 8, 64], [64], [4, 8, 64], [40, 2, 16, 64], [40, 2, 16, 64]] + [[]] * 15
    ci = [""] * 11 + ["fp8_e4m3"] + [""] * 8
    m = AiterPagedAttentionV1(
        _op("aiter::paged_attention_v1", dims, [BF16, U8, BF16, U8, U8], _decode_stats(4, 1, 100), concrete=ci)
    )
    assert m.kv_cache_dtype == "fp8_e4m3" and m.precision() == "fp8"


# The vLLM row of ../shared/traces/inference/vllm_decode_full/perf_csvs (reference values:
# 0.902529024 GFLOPs, 108.08984375 MiB = 113,340,416 B).
VLLM_DIMS = [[32, 64, 64], [32, 8, 64], [32, 8, 64], [32, 64, 64], [], [], [], [0]]
VLLM_TYPES = [BF16, BF16, BF16, BF16, "", "", "", BF16]
VLLM_ANN = "execute_32_context_0(sq0sk0sqsq0sqsk0)_generation_32(sq32sk55086sqsq32sqsk55086)"


def test_vllm_reference_row():
    m = VllmUnifiedAttention(_op("vllm::unified_attention_with_output", VLLM_DIMS, VLLM_TYPES, VLLM_ANN))
    assert m.flops() == 902_529_024  # 64*128*2*55,086
    # (32*(64*64*2 + 8*64*2) + (55,086 - 32)*8*128)*2 = (294,912 + 56,375,296)*2
    assert m.bytes() == 113_340_416
    assert m.compute_spec() == "matrix_bf16"
    assert m.params()["B"] == 32 and m.params()["N_KV"] == 55_086


def test_rocm_parent_uses_propagated_cache_dtype():
    base = dict(name="vllm::unified_attention_with_output", dims=VLLM_DIMS, types=VLLM_TYPES, stats=VLLM_ANN)
    m8 = VllmUnifiedAttention(_op(**base, meta={"KCache_dtype": U8, "KCache_source": "leaf"}))
    # FP8 cache; kv_cache_dummy_dep (argument 7) is recorded, so unified_kv_cache_update wrote
    # the new tokens and this op reads them from the cache as well: Q/O 32*64*64*2 = 262,144
    # elements at 2 B, new K/V 32*8*128 = 32,768 + cached 56,375,296 elements at 1 B
    # = 524,288 + 32,768 + 56,375,296 = 56,932,352 B; compute stays BF16
    assert (m8.dtype_KV, m8.bpe_KV, m8.bytes()) == (U8, 1, 56_932_352)
    assert m8.compute_spec() == "matrix_bf16" and m8.params()["dtype_KV_from"] == "leaf"
    # without the dummy (older vLLM: the op writes the new K/V itself) they count at BF16:
    # (262,144 + 32,768)*2 + 56,375,296 = 56,965,120 B
    old = dict(base, dims=VLLM_DIMS[:5], types=VLLM_TYPES[:5])
    m8 = VllmUnifiedAttention(_op(**old, meta={"KCache_dtype": U8}))
    assert (m8.dtype_KV, m8.dtype_new_KV, m8.bytes()) == (U8, BF16, 56_965_120)


def test_dtype_kv_priority():
    types = [BF16, "c10::Half", BF16]
    dims = [[4, 8, 64], [4, 2, 64], [4, 2, 64]]
    ann = "execute_4_context_0(sq0sk0sqsq0sqsk0)_generation_4(sq4sk331sqsq4sqsk331)"
    mk = lambda t, meta=None: InferenceAttention(_op("x", dims, t, ann, meta=meta))
    assert mk(types, {"KCache_dtype": FNUZ}).dtype_KV == FNUZ  # perf_meta first
    m = mk(types)  # then unknown: taken = the new key's dtype, with an assumption
    assert (m.dtype_KV, m.kv_unknown) == ("c10::Half", True) and m.assumptions()
    assert mk([BF16, "", BF16]).dtype_KV == BF16  # then dtype_Q


def test_d_h_v_from_v_tensor():
    # The reference tool read d_h_v from K (192 here); V is [tokens, H_KV, 128].
    dims = [[8, 16, 192], [8, 1, 192], [8, 1, 128], [8, 16, 128]]
    m = VllmUnifiedAttention(_op("vllm::unified_attention_with_output", dims, [BF16] * 4, _decode_stats(8, 1, 1000)))
    assert (m.d_h_qk, m.d_h_v) == (192, 128)
    assert m.flops() == 16 * (192 + 128) * 2 * 8000


def test_sglang_reference_row():
    # ../shared/traces/inference/sglang_decode/perf_csvs: 0.53714944 GFLOPs, 128.56640625 MiB
    dims = [
        [32, 32, 128],
        [10905190400],
        [32, 32, 128],
        [835874, 1, 8, 128],
        [835874, 1, 8, 128],
        [33],
        [20971520],
        [4096],
        [],
        [1],
        [1],
        [],
    ]
    types = [BF16, U8, BF16, BF16, BF16, "int", "int", "int", "", "float", "float", ""]
    op = _op(
        "sglang_profiler::attention_paged_attention_ragged_12",
        dims,
        types,
        "execute_32_context_0(sq0sk0sqsq0sqsk0)_generation_32(sq32sk32785sqsq32sqsk32785)",
    )
    cls = registry.model_for(op.name)
    assert cls is SglangPagedAttentionRagged
    m = cls(op)
    # Input type[1] is the uint8 workspace: dtype_KV must come from the K cache
    assert (m.dtype_KV, m.H_KV, m.B) == (BF16, 8, 32)
    assert m.flops() == 537_149_440  # 32*256*2*32,785
    assert m.bytes() == 134_811_648  # (32*10,240 + 32,753*2,048)*2
    assert m.compute_spec() == "matrix_bf16"


def test_incomplete_or_missing_stats_give_reasons():
    dims = [[4, 8, 64], [4, 2, 64], [4, 2, 64]]
    with pytest.raises(ModelError, match=r"annotation has no sk \(vLLM native format\)"):
        VllmUnifiedAttention(_op("v", dims, [BF16] * 3, "execute_context_0(0)_generation_4(4)"))
    with pytest.raises(ModelError, match="no iteration annotation"):
        VllmUnifiedAttention(_op("v", dims, [BF16] * 3, None))
    with pytest.raises(ModelError, match="unknown"):
        VllmUnifiedAttention(_op("v", dims, [BF16, "mystery", BF16], _decode_stats(4, 1, 9)))


def test_registry_and_exclusion():
    assert registry.model_for("aiter::paged_attention_v1") is AiterPagedAttentionV1
    assert registry.model_for("vllm::unified_attention_with_output") is VllmUnifiedAttention
    assert registry.model_for("_rocm_C::paged_attention") is None
    assert registry.model_for_op("vllm::unified_attention_with_output", {"exclude_perf_model": True}) is None
    assert registry.category_of("perfreport::paged_attention_decode") == "InferenceAttention_fwd"


_dim = st.integers(1, 512)


@settings(max_examples=300, deadline=None)
@given(
    hkv=st.integers(1, 16),
    group=st.integers(1, 16),
    dk=_dim,
    dv=_dim,
    dtype=st.sampled_from([BF16, "c10::Half", "float", FNUZ, U8]),
    c=st.tuples(st.integers(0, 10**6), st.integers(0, 10**7), st.integers(0, 10**9)),
    g=st.tuples(st.integers(0, 10**6), st.integers(0, 10**7), st.integers(0, 10**9)),
)
def test_four_terms_equal_single_dtype_formula(hkv, group, dk, dv, dtype, c, g):
    hq = hkv * group
    stats = {
        "c_sq": c[0],
        "c_sk": c[0] + c[1],
        "c_sqsq": c[2],
        "c_sqsk": c[2],
        "g_sq": g[0],
        "g_sk": g[0] + g[1],
        "g_sqsq": g[2],
        "g_sqsk": g[2],
        "c_reqs": None,
        "g_reqs": None,
    }
    dims = [[5, hq, dk], [5, hkv, dk], [5, hkv, dv]]
    m = InferenceAttention(_op("x", dims, [dtype, dtype, dtype], stats))
    bpe = m.bpe_Q
    assert m.bpe_KV == bpe
    single = ((c[0] + g[0]) * (hq * dk + hq * dv) + (stats["c_sk"] + stats["g_sk"]) * hkv * (dk + dv)) * bpe
    assert m.bytes() == single
    assert chunk_stats(m.op).prefill.sq == c[0]


# -- fixture traces: which row carries the model, and its hand values ------------------
# Fixture steps per cache dtype (bf16, float8_e4m3fnuz, uint8): decode, then mixed.
# decode: see test_aiter_leaf_bytes_and_compute_spec (BF16 177,664 B, FP8 93,952 B).
# mixed (c: sq16 sk24 sqsq256 sqsk384, g: sq3 sk294): ctx_q 16*1,280 = 20,480,
# ctx_kv (24-16)*256 = 2,048, gen_q 3*1,280 = 3,840, gen_kv (294-3)*256 = 74,496;
# BF16 100,864*2 = 201,728 B; FP8 24,320*2 + 76,544 = 125,184 B;
# FLOPs 8*128*(2*384 - 256 + 2*294) = 1,126,400.
# The aiter leaf reads the new tokens' K/V from its cache too: FP8 decode 92,928 B (above);
# mixed FP8 (16,384 + 3,072)*2 + (4,096 + 768) + (2,048 + 74,496) = 120,320 B (Q/O 1,024
# elements a token at 2 B; new K/V 256 a token and cached K/V at 1 B).
FIXTURE_BYTES = [177_664, 201_728, 93_952, 125_184, 93_952, 125_184]
LEAF_BYTES = [177_664, 201_728, 92_928, 120_320, 92_928, 120_320]
FIXTURE_FLOPS = [677_888, 1_126_400] * 3


def _modelled_rows(path):
    load_tree = pytest.importorskip("perfreport.pipeline").load_tree
    tree = load_tree(str(path))
    rows = []
    for o in tree.ops:
        cls = registry.model_for_op(o.name, o.perf_meta)
        if cls is not None and cls.category == "InferenceAttention_fwd":
            rows.append((o.name, cls(o)))
    return rows


def test_aiter_fixture_leaf_replaces_parent():
    rows = _modelled_rows(FIX / "inference_aiter_paged_attention_v1.json.gz")
    assert [n for n, _ in rows] == ["aiter::paged_attention_v1"] * 6
    assert [m.bytes() for _, m in rows] == LEAF_BYTES
    assert [m.flops() for _, m in rows] == FIXTURE_FLOPS
    assert [m.compute_spec() for _, m in rows] == ["matrix_bf16"] * 2 + ["matrix_fp8"] * 4
    assert [m.kv_layout for _, m in rows] == ["HND"] * 4 + ["NHD"] * 2


def test_rocm_fixture_parent_gets_cache_dtype():
    rows = _modelled_rows(FIX / "inference_rocm_paged_attention.json.gz")
    assert [n for n, _ in rows] == ["vllm::unified_attention_with_output"] * 6
    assert [m.bytes() for _, m in rows] == FIXTURE_BYTES
    assert [m.flops() for _, m in rows] == FIXTURE_FLOPS
    assert [m.dtype_KV for _, m in rows] == [BF16] * 2 + [FNUZ] * 2 + [U8] * 2
    assert all(m.compute_spec() == "matrix_bf16" for _, m in rows)


def test_uncited_compact_form_gives_no_figure_but_the_cited_form_gives_the_hand_value():
    # Issue 19: execute_context_1(888_788544)_generation_0(0) was read as 888 new tokens on
    # 788,544 KV tokens: pairs = 888*788,544 - 888^2/2 = 699,832,800 -> 2*8*(64+64)*pairs =
    # 1,433,257,574,400 FLOP (1433 GFLOP per call). No code is known to write that form, so
    # now the row gets no figure and the reason names the arithmetic (788,544 = 888^2).
    q, kv = [888, 8, 64], [888, 2, 64]
    dims, types = [q, kv, kv, q], [BF16] * 4
    with pytest.raises(ModelError, match=r"written by no known code.*788544 = 888\^2"):
        VllmUnifiedAttention(_op("v", dims, types, "execute_context_1(888_788544)_generation_0(0)"))
    # The same step in the cited detailed form (one fresh 888-token prefill: sk = 888,
    # sqsq = sqsk = 888^2): pairs = 788,544 - 394,272 = 394,272; 2*8*128*394,272 = 807,469,056.
    ann = "execute_888_context_1(sq888sk888sqsq788544sqsk788544)_generation_0(sq0sk0sqsq0sqsk0)"
    assert VllmUnifiedAttention(_op("v", dims, types, ann)).flops() == 807_469_056
