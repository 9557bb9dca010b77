"""pa/kernel/cache.py: KV cache layouts (NHD <-> 5D, both V forms), their geometry and refusals,
FP8 quantization per tensor / head / token, scattered block tables, random inputs."""

from __future__ import annotations

import pytest
import torch

from perfreport.pa.kernel.cache import (
    build_inputs,
    cache_geometry,
    default_fp8_dtype,
    fived_to_nhd,
    make_block_tables,
    nhd_to_5d,
    normalize_layout,
    quantize_fp8,
    vector_width,
)


def test_layout_names_and_vector_width():
    assert normalize_layout("nhd") == "NHD" and normalize_layout("5d") == "5D"
    with pytest.raises(ValueError, match="unknown KV layout 'HND'"):
        normalize_layout("HND")
    assert (vector_width(torch.bfloat16), vector_width(torch.float8_e4m3fn), vector_width(torch.float32)) == (8, 16, 4)
    assert default_fp8_dtype("cpu") == torch.float8_e4m3fn


def test_nhd_to_5d_places_every_element_and_round_trips():
    k = (
        torch.arange(2 * 16 * 3 * 16, dtype=torch.float32).reshape(2, 16, 3, 16).to(torch.bfloat16)
    )  # [blocks, page, H, D]
    v = -k[..., :8].clone()
    k5, v4 = nhd_to_5d(k, v)
    assert k5.shape == (2, 3, 2, 16, 8) and v4.shape == (2, 3, 8, 16)  # x = 8 for bf16
    b, t, h, d = 1, 5, 2, 11  # K[b, t, h, d] sits at k5[b, h, d // x, t, d % x]
    assert k5[b, h, d // 8, t, d % 8] == k[b, t, h, d] and v4[b, h, 3, t] == v[b, t, h, 3]
    kn, vn = fived_to_nhd(k5, v4)
    assert torch.equal(kn, k) and torch.equal(vn, v)
    k5, v5 = nhd_to_5d(k, v, v5=True)
    assert v5.shape == (2, 3, 2, 8, 8)  # [blocks, H, page/x, Dv, x]
    assert v5[b, h, t // 8, 3, t % 8] == v[b, t, h, 3]
    assert torch.equal(fived_to_nhd(k5, v5)[1], v)


def test_5d_refusals():
    with pytest.raises(ValueError, match="K head dim 12 is not a multiple of the 5D vector width 8"):
        nhd_to_5d(torch.zeros(1, 16, 1, 12, dtype=torch.bfloat16), torch.zeros(1, 16, 1, 8, dtype=torch.bfloat16))
    with pytest.raises(ValueError, match="page 12 is not a multiple of the 5D vector width 8"):
        nhd_to_5d(
            torch.zeros(1, 12, 1, 16, dtype=torch.bfloat16), torch.zeros(1, 12, 1, 8, dtype=torch.bfloat16), v5=True
        )


def test_cache_geometry():
    k, v = torch.zeros(4, 16, 2, 32), torch.zeros(4, 16, 2, 24)
    assert cache_geometry(k, v, "NHD") == (4, 16, 2, 32, 24)
    k5, v4 = nhd_to_5d(k.bfloat16(), v.bfloat16())
    assert cache_geometry(k5, v4, "5D") == (4, 16, 2, 32, 24)
    with pytest.raises(
        ValueError,
        match="K and V caches disagree: K has blocks=4 page=16 kv_heads=2, V has blocks=4 page=16 kv_heads=1",
    ):
        cache_geometry(k, torch.zeros(4, 16, 1, 24), "NHD")
    with pytest.raises(ValueError, match="NHD caches must be 4-D"):
        cache_geometry(k5, v4, "NHD")


def test_quantize_fp8_per_tensor_head_and_token():
    x = torch.randn(3, 16, 2, 8, generator=torch.Generator().manual_seed(1))
    x[0, 0, 1, 0] = 448.0 * 2  # the largest value: twice e4m3fn's max
    for mode, shape in (("tensor", (1,)), ("head", (2,)), ("token", (3, 2, 16))):
        q, s = quantize_fp8(x, torch.float8_e4m3fn, mode)
        assert q.dtype == torch.float8_e4m3fn and s.shape == shape
        full = s.reshape(1, 1, -1, 1) if mode == "head" else s.permute(0, 2, 1).unsqueeze(-1) if mode == "token" else s
        back = q.float() * full
        assert (back - x).abs().max() <= 0.07 * x.abs().amax()  # within e4m3's 3-bit mantissa
    q, s = quantize_fp8(x, torch.float8_e4m3fn, "tensor")
    assert s.item() == pytest.approx(2.0) and q.float().abs().max() == 448.0
    with pytest.raises(ValueError, match="unknown scale mode 'row'"):
        quantize_fp8(x, torch.float8_e4m3fn, "row")
    with pytest.raises(ValueError, match="unsupported FP8 dtype"):
        quantize_fp8(x, torch.float16)


def test_block_tables_give_every_sequence_its_own_pages():
    bt, n = make_block_tables([40, 16, 1], 16, extra_cols=1, generator=torch.Generator().manual_seed(0))
    assert n == 3 + 1 + 1 and bt.shape == (3, 4) and bt.dtype == torch.int32
    used = [bt[0, :3].tolist(), bt[1, :1].tolist(), bt[2, :1].tolist()]
    assert sorted(sum(used, [])) == list(range(5))
    assert bt[0, 3] == 0 and bt[1, 1:].tolist() == [0, 0, 0]


def test_build_inputs():
    inp = build_inputs(
        [40, 17], q_len=2, q_heads=4, kv_heads=2, head_dim=32, v_head_dim=16, page_size=16, kv_dtype="fp8"
    )
    assert inp.query.shape == (4, 4, 32) and inp.query.dtype == torch.bfloat16
    assert inp.key_cache.dtype == torch.float8_e4m3fn and inp.key_cache.shape == (5, 16, 2, 32)
    assert inp.context_lens.tolist() == [40, 17] and (inp.num_seqs, inp.max_context) == (2, 40)
    assert inp.scale == 32**-0.5 and inp.k_scale.shape == (1,)
    assert inp.kwargs() == dict(scale=inp.scale, k_scale=inp.k_scale, v_scale=inp.v_scale, q_len=2, layout="NHD")
    again = build_inputs(
        [40, 17], q_len=2, q_heads=4, kv_heads=2, head_dim=32, v_head_dim=16, page_size=16, kv_dtype="fp8"
    )
    assert torch.equal(again.query, inp.query)  # seeded
