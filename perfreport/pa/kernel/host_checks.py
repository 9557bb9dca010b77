"""Argument checks of the decode kernel's host wrapper (:mod:`perfreport.pa.kernel.host`).

Each raises ``ValueError`` with one line and never reads device memory: the KV dtype and its FP8
storage, a scale's kind (per tensor, KV head or token; K and V independently), the cache strides
the kernel takes per layout, and the context lengths' values when they are on the host (or the
caller's host-side bounds).
"""

from __future__ import annotations

import torch

from perfreport.pa.kernel.cache import FP8_DTYPES, default_fp8_dtype


def kv_kind(key_cache: torch.Tensor, value_cache: torch.Tensor, fp8_dtype) -> tuple[str, torch.dtype]:
    kd = key_cache.dtype
    if kd == torch.bfloat16:
        kind, storage = "bf16", torch.bfloat16
    elif kd in FP8_DTYPES:
        kind, storage = "fp8", kd
    elif kd == torch.uint8:
        kind, storage = "fp8", fp8_dtype or default_fp8_dtype(key_cache.device)
        if storage not in FP8_DTYPES:
            raise ValueError(f"fp8_dtype must be float8_e4m3fn or float8_e4m3fnuz, got {storage}")
    else:
        raise ValueError(
            f"unsupported KV cache dtype {kd}: expected bfloat16 or FP8 "
            "(float8_e4m3fn, float8_e4m3fnuz, or uint8 storage)"
        )
    if value_cache.dtype != kd:
        raise ValueError(f"K and V caches have different dtypes ({kd} and {value_cache.dtype})")
    return kind, storage


def scale_arg(s, name: str, device, nb: int, hkv: int, page: int):
    """(host multiplier, device tensor or None, mode, stride per block, stride per head).

    Modes: 0 none, 1 per tensor ``[1]``, 2 per KV head ``[H_KV]``, 3 per token ``[blocks, H_KV, page]``."""
    if s is None:
        return 1.0, None, 0, 0, 0
    if not isinstance(s, torch.Tensor):
        return float(s), None, 0, 0, 0
    if s.device != device:
        raise ValueError(f"{name} is on {s.device}, the caches are on {device}")
    t = s if s.dtype == torch.float32 else s.float()
    if t.numel() == 1:
        return 1.0, t.reshape(1), 1, 0, 0
    if t.dim() == 1 and t.numel() == hkv:
        return 1.0, t, 2, 0, t.stride(0)
    if tuple(t.shape) == (nb, hkv, page):
        if t.stride(2) != 1:
            t = t.contiguous()
        return 1.0, t, 3, t.stride(0), t.stride(1)
    raise ValueError(
        f"{name} must be one scale per tensor [1], per KV head [{hkv}] or per token "
        f"[{nb}, {hkv}, {page}], got shape {tuple(s.shape)}"
    )


def cache_strides(key_cache, value_cache, layout: str):
    """(k_strides, v_strides, v_layout) as the kernel takes them (see paged_attention.py)."""
    if layout == "NHD":
        return (
            (key_cache.stride(0), key_cache.stride(2), key_cache.stride(1), 0),
            (value_cache.stride(0), value_cache.stride(2), value_cache.stride(1), 1),
            0,
        )
    k = (key_cache.stride(0), key_cache.stride(1), key_cache.stride(3), key_cache.stride(2))
    if value_cache.dim() == 5:  # [blocks, H, page/x, Dv, x]
        return k, (value_cache.stride(0), value_cache.stride(1), value_cache.stride(2), value_cache.stride(3)), 2
    return k, (value_cache.stride(0), value_cache.stride(1), 0, value_cache.stride(2)), 1


def check_context_lengths(context_lens, q_len: int, min_context, max_context, span: int, width: int, page: int):
    if context_lens.device.type == "cpu":
        lo, hi = int(context_lens.min()), int(context_lens.max())
        min_context = lo if min_context is None else min(min_context, lo)
        if max_context is None:
            max_context = hi
        elif hi > max_context:
            raise ValueError(f"context length {hi} exceeds max_context {max_context}")
    if min_context is not None:
        if min_context < 1:
            raise ValueError(f"context lengths must be >= 1, got {min_context}")
        if min_context < q_len:
            raise ValueError(
                f"context length {min_context} is shorter than q_len {q_len}: the context "
                "includes the new tokens, so it must be >= q_len"
            )
    if max_context is not None:
        if max_context < 1:
            raise ValueError(f"context lengths must be >= 1, got max_context {max_context}")
        if max_context > span:
            raise ValueError(
                f"block table is too narrow: {width} pages of {page} hold {span} tokens, context needs {max_context}"
            )
    return min_context, max_context


__all__ = ["cache_strides", "check_context_lengths", "kv_kind", "scale_arg"]
