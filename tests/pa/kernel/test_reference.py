"""The torch reference against a naive per-token, per-head attention written from the definition."""

import math

import pytest
import torch

from perfreport.pa.kernel.reference import paged_attention_ref
from perfreport.pa.kernel.cache import (
    build_inputs,
    fived_to_nhd,
    make_block_tables,
    nhd_to_5d,
    quantize_fp8,
    vector_width,
)
from tests.kit.tensors import assert_close


def _naive(inp):
    """Loop over sequences, new tokens and query heads; read each key through the block table."""
    k, v = inp.key_cache, inp.value_cache
    if inp.layout == "5D":
        k, v = fived_to_nhd(k, v)
    if k.dtype == torch.uint8:
        k, v = k.view(inp.fp8_dtype), v.view(inp.fp8_dtype)
    ks = float(inp.k_scale) if inp.k_scale is not None else 1.0
    vs = float(inp.v_scale) if inp.v_scale is not None else 1.0
    page = k.shape[1]
    hq = inp.query.shape[1]
    g = hq // k.shape[2]
    out = torch.zeros(inp.query.shape[0], hq, v.shape[-1])
    for s, ctx in enumerate(inp.context_list):
        for t in range(inp.q_len):
            n_vis = ctx - inp.q_len + 1 + t
            for h in range(hq):
                q = inp.query[s * inp.q_len + t, h].float()
                if n_vis <= 0:
                    continue
                logits, vals = [], []
                for j in range(n_vis):
                    blk = int(inp.block_tables[s, j // page])
                    kk = k[blk, j % page, h // g].float() * ks
                    logits.append(float(q @ kk) * inp.scale)
                    vals.append(v[blk, j % page, h // g].float() * vs)
                m = max(logits)
                w = [math.exp(x - m) for x in logits]
                z = sum(w)
                out[s * inp.q_len + t, h] = sum(wi / z * vi for wi, vi in zip(w, vals))
    return out


@pytest.mark.parametrize(
    "kw",
    [
        dict(kv_dtype="bf16", layout="NHD", q_len=1, q_heads=2, kv_heads=2),
        dict(kv_dtype="bf16", layout="5D", q_len=3, q_heads=4, kv_heads=1),
        dict(kv_dtype="fp8", layout="NHD", q_len=2, q_heads=4, kv_heads=2),
        dict(kv_dtype="fp8", layout="5D", q_len=2, q_heads=2, kv_heads=1, uint8_storage=True),
    ],
)
def test_reference_matches_naive(kw):
    inp = build_inputs([19, 3, 40], head_dim=32, v_head_dim=16, page_size=16, seed=7, **kw)
    ref = paged_attention_ref(
        inp.query,
        inp.key_cache,
        inp.value_cache,
        inp.block_tables,
        inp.context_lens,
        fp8_dtype=inp.fp8_dtype,
        out_dtype=None,
        **inp.kwargs(),
    )
    assert_close(ref, _naive(inp), atol=1e-4, rtol=1e-4)
    if kw["q_len"] > 1:  # sequence 1 has ctx 3: its first tokens see 1.. keys, never none
        assert ref[kw["q_len"] : 2 * kw["q_len"]].abs().sum() > 0


def test_layout_round_trip_and_vector_width():
    inp = build_inputs([50], q_len=1, q_heads=2, kv_heads=2, head_dim=64, v_head_dim=32, page_size=16)
    k5, v5 = nhd_to_5d(inp.key_cache, inp.value_cache)
    assert k5.shape == (inp.key_cache.shape[0], 2, 64 // 8, 16, 8) and v5.shape[-2:] == (32, 16)
    kn, vn = fived_to_nhd(k5, v5)
    assert torch.equal(kn, inp.key_cache) and torch.equal(vn, inp.value_cache)
    assert vector_width(torch.bfloat16) == 8 and vector_width(torch.float8_e4m3fn) == 16


def test_fp8_quantization_per_tensor():
    x = torch.randn(1000) * 5
    for dt in (torch.float8_e4m3fn, torch.float8_e4m3fnuz):
        q, s = quantize_fp8(x, dt)
        assert q.dtype == dt and s.shape == (1,)
        assert math.isclose(float(s), float(x.abs().max()) / torch.finfo(dt).max, rel_tol=1e-6)
        assert (q.float() * s - x).abs().max() <= x.abs().max() * 2**-3


def test_block_tables_scatter_pages():
    bt, nb = make_block_tables([33, 16, 1], 16, generator=torch.Generator().manual_seed(0))
    assert bt.dtype == torch.int32 and bt.shape == (3, 3) and nb == 5
    used = torch.cat([bt[0, :3], bt[1, :1], bt[2, :1]])
    assert sorted(used.tolist()) == list(range(5))
