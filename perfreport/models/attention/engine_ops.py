"""The engines' inference-attention ops on :class:`~perfreport.models.attention.inference.InferenceAttention`:
vLLM's unified attention, aiter's and SGLang's paged attention, perfreport's own decode op.
Each class reads its op's signature (named in its docstring); the formulas are the base's."""

from __future__ import annotations

from typing import Any

from perfreport.errors import ModelError
from perfreport.models.attention.inference import InferenceAttention
from perfreport.models.base import concrete_input, input_dims
from perfreport.models.dtypes import is_tensor_type


class VllmUnifiedAttention(InferenceAttention):
    """``vllm::unified_attention_with_output(query, key, value, output, layer_name,
    output_scale, output_block_scale, kv_cache_dummy_dep)`` (vLLM
    ``vllm/model_executor/layers/attention/attention.py`` @0014ca6; earlier versions stop
    after ``layer_name`` or ``output_scale``).

    query/key/value are this step's new tokens ``[tokens, heads, dim]``; the KV cache is not
    an argument. Its dtype, in this order:

    * ``perf_meta.KCache_dtype``: an op under this one takes the cache (a paged-attention
      leaf or the cache write; :mod:`perfreport.passes.paged_attention_meta`);
    * ``kv_cache_dummy_dep`` (argument 7): ``unified_kv_cache_update(key, value, layer_name)``
      (same file) writes the new K/V into the cache in its own op and returns
      ``torch.empty(0, dtype=kv_cache.dtype)``, which ``Attention.forward`` passes here: a
      0-element tensor of the cache's dtype (``uint8`` for vLLM's FP8 caches). The new tokens
      are then already in the cache and this op's kernels read every key from it, so the new
      K/V are charged at the cache dtype too;
    * else unknown (the base's assumption: taken = the new key's dtype, bounds down to 1 B).

    FP8 changes only the bytes: the compute precision stays the query dtype.
    """

    DUMMY_DEP = 7
    O_ARG = 3  # output: BF16 while the query may be FP8-quantized (Attention.forward)

    def read_dtypes(self) -> tuple[str, str]:
        dq, dkv = super().read_dtypes()
        dims = self.op.args.get("Input Dims") or []
        types = self.op.args.get("Input type") or []
        i = self.DUMMY_DEP
        if len(dims) > i and dims[i] == [0] and len(types) > i and is_tensor_type(types[i]):
            if self.kv_unknown:
                dkv, self.kv_unknown = types[i], False
                self.kv_from = (
                    f"kv_cache_dummy_dep (argument {i}): the 0-element tensor of the cache's "
                    "dtype that unified_kv_cache_update returns"
                )
            self.dtype_new_KV = None  # written by unified_kv_cache_update: read from the cache
        return dq, dkv


def layout_heads(op, k: list[int], v: list[int], layout: str, h_q: int) -> dict[str, Any]:
    """H_KV / d_h_qk / d_h_v / layout name of a paged K/V cache.

    4D: ``HND`` [blocks, H_KV, page, D] or ``NHD`` [blocks, page, H_KV, D]; 5D (AMD
    vectorized): K [blocks, H_KV, D/x, page, x], V [blocks, H_KV, D, page] or the vectorized
    [blocks, H_KV, page/x, D, x]. Without the
    layout string (torch does not record ``str`` args), the candidate that divides H_Q is
    taken; if both do, HND is assumed and the layout reads ``HND (assumed)``.
    """
    if len(k) == 5:
        if len(v) == 5:  # vectorized V [blocks, H_KV, page/x, D, x] (aiter shuffled caches)
            return dict(H_KV=k[1], d_h_qk=k[2] * k[4], d_h_v=v[3], kv_layout="5D")
        if len(v) != 4:
            raise ModelError(f"{op.name}: 5D key cache needs a 4D or 5D value cache")
        return dict(H_KV=k[1], d_h_qk=k[2] * k[4], d_h_v=v[2], kv_layout="5D")
    if len(k) != 4 or len(v) != 4:
        raise ModelError(f"{op.name}: expected 4D or 5D paged K/V caches")
    lay = layout.strip().strip("'\"").upper()
    if lay not in ("HND", "NHD"):
        fits_hnd = k[1] > 0 and h_q % k[1] == 0
        fits_nhd = k[2] > 0 and h_q % k[2] == 0
        if fits_nhd and not fits_hnd:
            lay = "NHD"
        elif fits_hnd and (not fits_nhd or k[1] == k[2]):
            lay = "HND"
        else:
            lay = "HND (assumed)"
    h_kv = k[2] if lay == "NHD" else k[1]
    return dict(H_KV=h_kv, d_h_qk=k[3], d_h_v=v[3], kv_layout=lay)


class AiterPagedAttentionV1(InferenceAttention):
    """``aiter::paged_attention_v1(out, workspace_buffer, query, key_cache, value_cache,
    scale, block_tables, cu_query_lens, context_lens, max_context_len, alibi_slopes,
    kv_cache_dtype, kv_cache_layout, logits_soft_cap, k_scale, v_scale, ...)``.

    Q/K/V from Input Dims[2..4], dtypes from Input type[2..3]; compute precision is the KV
    dtype (the kernel's MFMAs run in it), so FP8 caches use the FP8 peak (``matrix_fp8``).
    """

    compute_in_kv_dtype = True
    Q, K, V, BLOCK_TABLES, KV_CACHE_DTYPE, LAYOUT = 2, 3, 4, 6, 11, 12
    O_ARG = 0

    def read_shapes(self) -> dict[str, Any]:
        q, k, v = (input_dims(self.op, i) for i in (self.Q, self.K, self.V))
        if len(q) != 3:
            raise ModelError(f"{self.op.name}: expected query [tokens, H_Q, D]")
        out = layout_heads(self.op, k, v, concrete_input(self.op, self.LAYOUT), q[1])
        out.update(N_Q=q[0], H_Q=q[1], d_h_qk=q[2])
        bt = self.op.args.get("Input Dims") or []
        if len(bt) > self.BLOCK_TABLES and len(bt[self.BLOCK_TABLES]) == 2:
            out["B"] = bt[self.BLOCK_TABLES][0]
        return out

    def read_dtypes(self) -> tuple[str, str]:
        return self.cache_dtypes(self.Q, self.K)

    def read_kv_cache_dtype(self) -> str:
        return concrete_input(self.op, self.KV_CACHE_DTYPE)


class SglangPagedAttentionRagged(InferenceAttention):
    """``sglang_profiler::attention_paged_attention_ragged[_<layer>]`` (SGLang's wrapper of
    aiter's ragged paged attention): (out, workspace, query, key_cache, value_cache,
    kv_indptr, kv_page_indices, kv_last_page_lens, ...), caches ``[pages, page, H_KV, D]``.

    Input type[1] is the uint8 workspace, not a cache: dtype_KV comes from Input type[3].
    Same kernel family as paged_attention_v1, so the compute precision is the KV dtype.
    """

    compute_in_kv_dtype = True
    Q, K, V, KV_INDPTR = 2, 3, 4, 5
    O_ARG = 0

    def read_shapes(self) -> dict[str, Any]:
        q, k, v = (input_dims(self.op, i) for i in (self.Q, self.K, self.V))
        if len(q) != 3:
            raise ModelError(f"{self.op.name}: expected query [tokens, H_Q, D]")
        out = layout_heads(self.op, k, v, "NHD", q[1])
        out.update(N_Q=q[0], H_Q=q[1], d_h_qk=q[2])
        dims = self.op.args.get("Input Dims") or []
        if len(dims) > self.KV_INDPTR and len(dims[self.KV_INDPTR]) == 1:
            out["B"] = max(dims[self.KV_INDPTR][0] - 1, 0)
        return out

    def read_dtypes(self) -> tuple[str, str]:
        return self.cache_dtypes(self.Q, self.K)


class AiterPagedAttentionRagged(SglangPagedAttentionRagged):
    """``aiter::paged_attention_ragged(out, workspace_buffer, query, key_cache, value_cache,
    scale, kv_indptr, kv_page_indices, kv_last_page_lens, block_size, ...)`` (aiter
    ``csrc/include/attention_ragged.h``): SGLang's wrapper order with ``scale`` before
    ``kv_indptr``, so B = len(kv_indptr) - 1 is read from position 6."""

    KV_INDPTR = 6


class PerfreportPagedAttentionDecode(InferenceAttention):
    """Our bench op ``perfreport::paged_attention_decode(out, query, key_cache, value_cache,
    block_tables, context_lens, k_scale, v_scale, scale, kv_layout)``.

    query ``[num_seqs*q_len, H_Q, Dk]``; "NHD" caches ``[blocks, page, H_KV, D]``; "5D" K
    ``[blocks, H_KV, Dk/x, page, x]``, V ``[blocks, H_KV, Dv, page]``. Caches are bf16,
    float8 or uint8 storage (FP8). The kernel dequantizes FP8 to 16 bits in registers, so
    its MMAs (and the compute peak) use the query dtype.
    """

    Q, K, V, BLOCK_TABLES, LAYOUT = 1, 2, 3, 4, 9
    O_ARG = 0

    def read_shapes(self) -> dict[str, Any]:
        q, k, v = (input_dims(self.op, i) for i in (self.Q, self.K, self.V))
        if len(q) != 3:
            raise ModelError(f"{self.op.name}: expected query [tokens, H_Q, Dk]")
        lay = concrete_input(self.op, self.LAYOUT) or ("5D" if len(k) == 5 else "NHD")
        out = layout_heads(self.op, k, v, lay, q[1])
        out.update(N_Q=q[0], H_Q=q[1], d_h_qk=q[2])
        bt = input_dims(self.op, self.BLOCK_TABLES)
        if len(bt) == 2:
            out["B"] = bt[0]
        return out

    def read_dtypes(self) -> tuple[str, str]:
        return self.cache_dtypes(self.Q, self.K)


__all__ = [
    "VllmUnifiedAttention",
    "AiterPagedAttentionV1",
    "SglangPagedAttentionRagged",
    "AiterPagedAttentionRagged",
    "PerfreportPagedAttentionDecode",
    "layout_heads",
]
