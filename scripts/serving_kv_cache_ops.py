"""Stand-in KV-cache write ops (vLLM ``_C_cache_ops``, SGLang), registered under their real names.

``reshape_and_cache_flash`` (NHD cache [blocks, page, Hkv, D], BF16 or FP8 stored as uint8),
``reshape_and_cache`` (K [blocks, Hkv, D/x, page, x], V [blocks, Hkv, D, page]),
``concat_and_cache_mla`` (latent ‖ rope rows) and ``sglang::store_cache(k, v, k_cache, v_cache,
indices, *, row_bytes, num_split, size_limit)`` (SGLang python/sglang/jit_kernel/kvcache.py: 2-d
new K/V ``[T, H*D]`` and cache rows ``[slots, H*D]``): each writes the new rows into the slots
it is given.
"""

from __future__ import annotations

import torch

from stand_in_library import define


def _store(cache_rows: torch.Tensor, slots, new: torch.Tensor, scale=None) -> None:
    """cache_rows: [slots, ...] view of the cache; FP8-as-uint8 caches get scaled e4m3 bytes."""
    if cache_rows.dtype == torch.uint8:
        new = (new.float() / scale).to(torch.float8_e4m3fn).view(torch.uint8)
    cache_rows[slots.long()] = new.reshape(new.shape[0], *cache_rows.shape[1:]).to(cache_rows.dtype)


def reshape_and_cache_flash(key, value, key_cache, value_cache, slot_mapping, kv_cache_dtype, k_scale, v_scale):
    # NHD cache [blocks, page, Hkv, D] -> rows [blocks·page, Hkv, D]
    _store(key_cache.view(-1, *key_cache.shape[2:]), slot_mapping, key, k_scale)
    _store(value_cache.view(-1, *value_cache.shape[2:]), slot_mapping, value, v_scale)


def reshape_and_cache(key, value, key_cache, value_cache, slot_mapping, kv_cache_dtype, k_scale, v_scale):
    # K [blocks, Hkv, D/x, page, x], V [blocks, Hkv, D, page]
    for i, slot in enumerate(slot_mapping.tolist()):
        b, o = divmod(slot, key_cache.shape[3])
        x = key_cache.shape[4]
        key_cache[b, :, :, o, :] = key[i].reshape(key.shape[1], -1, x).to(key_cache.dtype)
        value_cache[b, :, :, o] = value[i].to(value_cache.dtype)


def concat_and_cache_mla(kv_c, k_pe, kv_cache, slot_mapping, kv_cache_dtype, scale):
    _store(kv_cache.view(-1, kv_cache.shape[2]), slot_mapping, torch.cat((kv_c, k_pe), -1))


def store_cache(k, v, k_cache, v_cache, indices, *, row_bytes=0, num_split=0, size_limit=0):
    _store(k_cache, indices, k)
    _store(v_cache, indices, v)


def register() -> None:
    define(
        "_C_cache_ops",
        "reshape_and_cache_flash(Tensor key, Tensor value, "
        "Tensor(a!) key_cache, Tensor(b!) value_cache, Tensor slot_mapping, "
        "str kv_cache_dtype, Tensor k_scale, Tensor v_scale) -> ()",
        reshape_and_cache_flash,
    )
    define(
        "_C_cache_ops",
        "reshape_and_cache(Tensor key, Tensor value, Tensor(a!) key_cache, "
        "Tensor(b!) value_cache, Tensor slot_mapping, str kv_cache_dtype, Tensor k_scale, "
        "Tensor v_scale) -> ()",
        reshape_and_cache,
    )
    define(
        "_C_cache_ops",
        "concat_and_cache_mla(Tensor kv_c, Tensor k_pe, Tensor(a!) kv_cache, "
        "Tensor slot_mapping, str kv_cache_dtype, Tensor scale) -> ()",
        concat_and_cache_mla,
    )
    define(
        "sglang",
        "store_cache(Tensor k, Tensor v, Tensor(a!) k_cache, Tensor(b!) v_cache, "
        "Tensor indices, *, int row_bytes=0, int num_split=0, int size_limit=0) -> ()",
        store_cache,
    )
