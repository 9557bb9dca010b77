"""Torch reference for paged-attention decode: gather pages, dequantize, attend in fp32.

This is also the ``torch`` backend of ``bench-pa`` (the default baseline): a
gather-then-attend implementation, batched over sequences, with no host sync (the
gather uses the full block-table width and masks by the context lengths on the device).

Semantics (shared with the Triton kernel):

* ``query`` is ``[num_seqs * q_len, H_Q, Dk]``; rows ``s*q_len .. s*q_len+q_len-1`` are the
  q_len newest tokens of sequence ``s``, whose context length ``ctx`` includes them.
* Query head ``h`` reads KV head ``h // (H_Q // H_KV)``.
* Causal across the new tokens: token ``t`` (0-based) sees keys ``0 .. ctx - q_len + t``, i.e.
  ``ctx - q_len + 1 + t`` keys. A token that sees no key (``ctx < q_len``) gets a zero output.
* FP8 caches are dequantized as ``value * scale``; ``k_scale``/``v_scale`` hold one scale per
  tensor (``[1]`` or a float), per KV head (``[H_KV]``) or per token (``[num_blocks, H_KV, page]``).
* Slots past a sequence's context (the stale tail of its last page, the unused block-table
  entries) are zeroed in K and V before any matmul, so stale NaN/Inf bytes cannot reach the
  output (0 * NaN is NaN; masking the scores alone is not enough).
"""

from __future__ import annotations

import torch

from perfreport.pa.kernel.cache import FP8_DTYPES, cache_geometry, fived_to_nhd, normalize_layout


def _gather_float(cache: torch.Tensor, bt: torch.Tensor, fp8_dtype: torch.dtype | None) -> torch.Tensor:
    """cache[bt] in fp32; FP8 pages are gathered as bytes, then converted (only the gathered pages)."""
    if cache.dtype in FP8_DTYPES or cache.dtype == torch.uint8:
        fdt = cache.dtype if cache.dtype in FP8_DTYPES else (fp8_dtype or torch.float8_e4m3fn)
        return cache.view(torch.uint8)[bt].view(fdt).float()
    return cache[bt].float()


def _scale_of(s, bt: torch.Tensor, n_keys: int, hkv: int):
    """The scale broadcastable to gathered ``[S, n_keys, H_KV, 1]`` values."""
    if s is None:
        return 1.0
    if not isinstance(s, torch.Tensor):
        return float(s)
    s = s.float()
    if s.numel() == 1:
        return s.reshape(())
    if s.dim() == 1 and s.numel() == hkv:
        return s.reshape(1, 1, hkv, 1)
    if s.dim() == 3 and s.shape[1] == hkv:  # [blocks, H_KV, page] -> gathered per token
        g = s.permute(0, 2, 1)[bt.long()]  # [S, W, page, H_KV]
        return g.reshape(bt.shape[0], n_keys, hkv, 1)
    raise ValueError(f"scale of shape {tuple(s.shape)}: expected [1], [H_KV] or [num_blocks, H_KV, page]")


def _cast(x, dtype):
    return x.to(dtype) if isinstance(x, torch.Tensor) else x


def paged_attention_ref(
    query: torch.Tensor,
    key_cache: torch.Tensor,
    value_cache: torch.Tensor,
    block_tables: torch.Tensor,
    context_lens: torch.Tensor,
    *,
    scale: float,
    k_scale=None,
    v_scale=None,
    q_len: int = 1,
    layout: str = "NHD",
    fp8_dtype: torch.dtype | None = None,
    out_dtype: torch.dtype | None = torch.bfloat16,
    compute_dtype: torch.dtype = torch.float32,
) -> torch.Tensor:
    """Attention output ``[num_seqs * q_len, H_Q, Dv]`` (``out_dtype``; None keeps ``compute_dtype``,
    fp32 by default; float64 gives the reference the FP8 error figures are measured against)."""
    layout = normalize_layout(layout)
    if layout == "5D":
        key_cache, value_cache = fived_to_nhd(key_cache, value_cache)
    nb, page, hkv, dk, dv = cache_geometry(key_cache, value_cache, "NHD")
    s, width = block_tables.shape
    t_rows, hq, qdk = query.shape
    if t_rows != s * q_len or hq % hkv or qdk != dk:
        raise ValueError("query shape does not match the caches, block table and q_len")
    g = hq // hkv
    n_keys = width * page
    bt = block_tables.long()
    # gather-then-attend: [S, W*page, H_KV, D] in fp32
    ctx = context_lens.to(query.device).long().reshape(s, 1, 1)
    live = torch.arange(n_keys, device=query.device).reshape(1, n_keys) < ctx.reshape(s, 1)
    live = live.reshape(s, n_keys, 1, 1)
    cd = compute_dtype
    k = _gather_float(key_cache, bt, fp8_dtype).reshape(s, n_keys, hkv, dk).to(cd)
    v = _gather_float(value_cache, bt, fp8_dtype).reshape(s, n_keys, hkv, dv).to(cd)
    k = torch.where(live, k * _cast(_scale_of(k_scale, bt, n_keys, hkv), cd), 0.0)  # stale -> 0 first
    v = torch.where(live, v * _cast(_scale_of(v_scale, bt, n_keys, hkv), cd), 0.0)
    q = query.to(cd).reshape(s, q_len, hkv, g, dk).permute(0, 2, 1, 3, 4).reshape(s, hkv, q_len * g, dk)
    scores = torch.einsum("shrd,snhd->shrn", q, k) * scale
    tok = torch.arange(q_len, device=query.device).repeat_interleave(g).reshape(1, q_len * g, 1)
    visible = ctx - q_len + 1 + tok  # [S, R, 1] keys each row sees
    pos = torch.arange(n_keys, device=query.device).reshape(1, 1, n_keys)
    mask = (pos < visible).unsqueeze(1)  # [S, 1, R, N]
    scores = scores.masked_fill(~mask, float("-inf"))
    m = scores.amax(dim=-1, keepdim=True).clamp_min(torch.finfo(cd).min)
    p = torch.exp(scores - m)
    denom = p.sum(dim=-1, keepdim=True)
    p = p / torch.where(denom > 0, denom, torch.ones_like(denom))
    out = torch.einsum("shrn,snhd->shrd", p, v)  # [S, H_KV, R, Dv]
    out = out.reshape(s, hkv, q_len, g, dv).permute(0, 2, 1, 3, 4).reshape(s * q_len, hq, dv)
    return out if out_dtype is None else out.to(out_dtype)


def is_fp8_storage(dtype: torch.dtype) -> bool:
    return dtype in FP8_DTYPES or dtype == torch.uint8


__all__ = ["paged_attention_ref", "is_fp8_storage"]
