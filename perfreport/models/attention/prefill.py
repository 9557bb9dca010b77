"""Varlen / paged prefill attention ops of serving stacks, on the step's chunk statistics.

These kernels take the step's packed queries (``[total_q, H_Q, D]``) and either the new
K/V tokens (varlen) or a paged KV cache, with per-request offsets (``cu_seqlens``,
``kv_indptr``) whose *values* the profiler does not record. Their work is therefore the
same :class:`~perfreport.models.attention.inference.InferenceAttention` formula over the
iteration annotation's statistics (exact per-request sums), not a mean-length guess; a
``window_size_left`` argument (keys to the left of each query, -1 = none) caps it as a
sliding window of ``window_size_left + 1`` keys.

Signatures (positional, as the traces record them; aiter ``csrc/include/torch/mha_*.h``):

* ``aiter::mha_varlen_fwd(q [total_q, hq, d], k [total_k, hk, d], v [total_k, hk, d_v],
  cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k, min_seqlen_q, p_dropout,
  softmax_scale, logits_soft_cap, zero_tensors, is_causal, window_size_left,
  window_size_right, ...)``;
* ``aiter::mha_batch_prefill(q [total_q, hq, d], k, v, cu_seqlens_q, kv_indptr,
  kv_page_indices, max_seqlen_q, max_seqlen_k, p_dropout, softmax_scale, logits_soft_cap,
  zero_tensors, is_causal, window_size_left, window_size_right, ...)``, K/V either
  ``[total_k, hk, d]`` (page size 1), 4D pages (NHD ``[blocks, page, hk, d]`` / HND
  ``[blocks, hk, page, d]``) or the vectorized 5D layout K ``[blocks, hk, d/x, page, x]``,
  V ``[blocks, hk, page/x, d_v, x]``;
* ``aiter::fmha_v3_varlen_fwd(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q,
  max_seqlen_k, min_seqlen_q, p_dropout, softmax_scale, logits_soft_cap, zero_tensors,
  is_causal, window_size_left, window_size_right, ...)``: the mha_varlen_fwd order up to the
  window (aiter ``csrc/include/torch/mha_v3_varlen_fwd.h``; later arguments differ between
  aiter versions and are not read).

Compute precision: the query dtype (these kernels run their MMAs on 16-bit Q/K/V; FP8
caches change the bytes through the KV dtype only).
"""

from __future__ import annotations

from typing import Any

from perfreport.errors import ModelError
from perfreport.models.base import input_dims
from perfreport.models.attention.engine_ops import layout_heads
from perfreport.models.attention.inference import InferenceAttention


class VarlenPrefill(InferenceAttention):
    """q/k/v ``[tokens, heads, dim]`` at positions Q, K, V."""

    Q, K, V = 0, 1, 2

    def read_shapes(self) -> dict[str, Any]:
        q, k, v = (input_dims(self.op, i) for i in (self.Q, self.K, self.V))
        if len(q) != 3:
            raise ModelError(f"{self.op.name}: expected query [total_q, H_Q, D]")
        out = dict(N_Q=q[0], H_Q=q[1], d_h_qk=q[2])
        out.update(self.kv_heads(k, v, q[1]))
        return out

    def kv_heads(self, k: list[int], v: list[int], h_q: int) -> dict[str, Any]:
        if len(k) != 3 or len(v) != 3:
            raise ModelError(f"{self.op.name}: expected key/value [total_k, H_KV, D]")
        return dict(H_KV=k[1], d_h_v=v[2], kv_layout="THD")

    def read_dtypes(self) -> tuple[str, str]:
        return self.cache_dtypes(self.Q, self.K, "k")


class AiterMhaVarlenFwd(VarlenPrefill):
    """``aiter::mha_varlen_fwd`` (see the module doc)."""

    WINDOW = 13


class AiterFmhaV3VarlenFwd(VarlenPrefill):
    """``aiter::fmha_v3_varlen_fwd`` (see the module doc)."""

    WINDOW = 13


class AiterMhaBatchPrefill(VarlenPrefill):
    """``aiter::mha_batch_prefill`` (see the module doc)."""

    WINDOW = 13

    def kv_heads(self, k: list[int], v: list[int], h_q: int) -> dict[str, Any]:
        if len(k) == 3 and len(v) == 3:
            return dict(H_KV=k[1], d_h_v=v[2], kv_layout="page 1")
        if len(k) == 5 and len(v) == 5:
            return dict(H_KV=k[1], d_h_v=v[3], kv_layout="5D")
        if len(k) == 4 and len(v) == 4:
            out = layout_heads(self.op, k, v, "", h_q)
            out.pop("d_h_qk", None)
            return out
        raise ModelError(f"{self.op.name}: unexpected paged K/V shapes {k} {v}")


__all__ = ["VarlenPrefill", "AiterMhaVarlenFwd", "AiterFmhaV3VarlenFwd", "AiterMhaBatchPrefill"]
