"""pa/kernel/host_checks.py: the host wrapper's argument checks (dtypes, scales, strides, context
lengths), each one ValueError line, on CPU tensors."""

from __future__ import annotations

import pytest
import torch

from perfreport.pa.kernel.host_checks import cache_strides, check_context_lengths, kv_kind, scale_arg

CPU = torch.device("cpu")


def test_kv_kind():
    bf = torch.zeros(2, 4, dtype=torch.bfloat16)
    assert kv_kind(bf, bf, None) == ("bf16", torch.bfloat16)
    f8 = torch.zeros(2, 4, dtype=torch.float8_e4m3fn)
    assert kv_kind(f8, f8, None) == ("fp8", torch.float8_e4m3fn)
    u8 = torch.zeros(2, 4, dtype=torch.uint8)
    assert kv_kind(u8, u8, torch.float8_e4m3fnuz) == ("fp8", torch.float8_e4m3fnuz)
    assert kv_kind(u8, u8, None) == ("fp8", torch.float8_e4m3fn)  # CPU: e4m3fn
    with pytest.raises(ValueError, match="fp8_dtype must be float8_e4m3fn or float8_e4m3fnuz"):
        kv_kind(u8, u8, torch.float16)
    with pytest.raises(ValueError, match="unsupported KV cache dtype torch.float16"):
        kv_kind(bf.half(), bf.half(), None)
    with pytest.raises(ValueError, match="K and V caches have different dtypes"):
        kv_kind(bf, f8, None)


def test_scale_arg_modes():
    nb, hkv, page = 3, 2, 4
    assert scale_arg(None, "k_scale", CPU, nb, hkv, page) == (1.0, None, 0, 0, 0)
    assert scale_arg(0.5, "k_scale", CPU, nb, hkv, page) == (0.5, None, 0, 0, 0)
    mult, t, mode, sb, sh = scale_arg(torch.tensor(2.0, dtype=torch.float16), "k_scale", CPU, nb, hkv, page)
    assert (mult, mode, sb, sh, t.dtype, t.shape) == (1.0, 1, 0, 0, torch.float32, (1,))
    _, t, mode, sb, sh = scale_arg(torch.ones(hkv), "v_scale", CPU, nb, hkv, page)
    assert (mode, sb, sh) == (2, 0, 1)
    _, t, mode, sb, sh = scale_arg(torch.ones(nb, hkv, page), "v_scale", CPU, nb, hkv, page)
    assert (mode, sb, sh) == (3, hkv * page, page)
    _, t, mode, sb, sh = scale_arg(torch.ones(nb, page, hkv).transpose(1, 2), "v_scale", CPU, nb, hkv, page)
    assert (mode, t.stride(2), sb, sh) == (3, 1, hkv * page, page)  # made contiguous
    with pytest.raises(
        ValueError,
        match=r"k_scale must be one scale per tensor \[1\], per KV head \[2\] or per token \[3, 2, 4\], got shape \(5,\)",
    ):
        scale_arg(torch.ones(5), "k_scale", CPU, nb, hkv, page)
    with pytest.raises(ValueError, match="k_scale is on meta, the caches are on cpu"):
        scale_arg(torch.ones(1, device="meta"), "k_scale", CPU, nb, hkv, page)


def test_cache_strides_per_layout():
    blocks, page, h, d = 2, 16, 4, 8
    k = torch.zeros(blocks, page, h, d)  # NHD: [blocks, page, H, D]
    assert cache_strides(k, k, "NHD") == ((512, 8, 32, 0), (512, 8, 32, 1), 0)
    k = torch.zeros(blocks, h, page, d)  # HND: [blocks, H, page, D]
    assert cache_strides(k, k, "HND") == ((512, 128, 1, 8), (512, 128, 0, 8), 1)
    v5 = torch.zeros(blocks, h, page // 8, d, 8)  # [blocks, H, page/x, Dv, x]
    assert cache_strides(k, v5, "HND") == ((512, 128, 1, 8), (512, 128, 64, 8), 2)


def test_check_context_lengths():
    lens = torch.tensor([5, 9, 7])
    assert check_context_lengths(lens, 1, None, None, 32, 2, 16) == (5, 9)
    assert check_context_lengths(lens, 1, 3, 20, 32, 2, 16) == (3, 20)
    with pytest.raises(ValueError, match="context length 9 exceeds max_context 8"):
        check_context_lengths(lens, 1, None, 8, 32, 2, 16)
    with pytest.raises(ValueError, match="context length 5 is shorter than q_len 6"):
        check_context_lengths(lens, 6, None, None, 32, 2, 16)
    with pytest.raises(ValueError, match="context lengths must be >= 1, got 0"):
        check_context_lengths(torch.tensor([0, 3]), 1, None, None, 32, 2, 16)
    with pytest.raises(ValueError, match="block table is too narrow: 2 pages of 4 hold 8 tokens, context needs 9"):
        check_context_lengths(lens, 1, None, None, 8, 2, 4)
    meta = torch.tensor([5], device="meta")  # not on the host: only the caller's bounds
    assert check_context_lengths(meta, 1, None, None, 8, 2, 4) == (None, None)
    with pytest.raises(ValueError, match="got max_context 0"):
        check_context_lengths(meta, 1, None, 0, 8, 2, 4)
