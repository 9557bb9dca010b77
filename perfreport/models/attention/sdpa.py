"""Attention (scaled dot-product) models, forward and backward.

Forward FLOPs = 2·B·H_Q·P·(d_qk + d_v)  where P = (query, key) pairs kept per (batch, head):
  S = Q·Kᵀ costs 2·P·d_qk, O = softmax(S)·V costs 2·P·d_v (softmax itself not counted,
  as in the FlashAttention-2 paper, Dao 2023, §4.1 "FLOPs = 4·seqlen²·head_dim·n_heads").
  * not causal: P = N_Q·N_KV.
  * causal: the mask keeps about half of the square. We use the continuous count (no +N/2
    diagonal term), which for N_Q == N_KV is exactly P = N²/2 — the FA-2 paper's
    "divide by 2 for causal" convention, and what the reference CSVs report:
      - top-left aligned (PyTorch SDPA ``is_causal``; ``aten::*`` ops):
        P = N_Q²/2 if N_Q <= N_KV else N_Q·N_KV − N_KV²/2
      - bottom-right aligned (flash-attn >= 2.1 ``flash_attn::*``; mem-efficient
        ``custom_mask_type`` 2): P = N_Q·N_KV − N_Q²/2 if N_Q <= N_KV else N_KV²/2
        (so causal decode, N_Q = 1, keeps all N_KV keys).
  * sliding window (flash-attn ``window_size_left`` >= 0): P ≤ N_Q·(left + 1 + max(right, 0)).
  Dropout does not change FLOPs.
Backward FLOPs = 2.5 × forward: the backward pass does 5 matmuls of the forward's size
  (dV = Pᵀ·dO, dP = dO·Vᵀ, recompute S = Q·Kᵀ, dQ = dS·K, dK = dSᵀ·Q) against 2 forward
  (FlashAttention-2 paper, §4.1).
GQA/MQA: H_Q from Q, H_KV from K; FLOPs scale with H_Q (every query head attends).
d_v is taken from the V tensor (Dk != Dv, e.g. MLA 192/128).
Bytes, forward = Q + K + V + O at their ACTUAL recorded dtypes (O at Q's dtype, shape
  [.., H_Q, N_Q, d_v]). The reference tool multiplies by 2 bytes/element whatever the dtype,
  which is wrong for fp32/fp8; we are not. The softmax log-sum-exp (fp32, B·H_Q·N_Q) is
  not counted (< 1/d of O).
Bytes, backward = read Q, K, V, O, dO + write dQ, dK, dV.

Layouts: ``BHND`` [B, H, N, d] (``aten::_scaled_dot_product_*``), ``BNHD`` [B, N, H, d]
(``aten::_flash_attention_forward``, ``flash_attn::*``), ``THD`` [total_tokens, H, d] (varlen,
when cumulative sequence lengths are passed). The profiler records cu_seqlens only as a shape
(tensor values are never in ``Concrete Inputs``), so B = len(cu_seqlens) − 1. flash_attn varlen
ops (``flash_attn_varlen_func`` and its qkv/kv-packed forms all reach
``flash_attn::_flash_attn_varlen_forward`` / ``_backward``) take their (query, key) pairs from
the step's chunk statistics when an iteration annotation holds the op
(``needs = ("iteration",)``) and its sums match the packed tensors (Σsq = total_q and
Σsk = total_k over the prefill and decode groups): per sequence i, sq_i <= sk_i, so the
bottom-right causal count is sq_i·sk_i − sq_i²/2 and the sum is P = sqsk − sqsq/2 (c + g
groups); not causal P = sqsk; a window caps P at total_q·(left + 1 + max(right, 0)).
FLOPs = 2·H_Q·P·(d_qk + d_v) (backward 2.5×). Otherwise every sequence is taken to have the
mean length (N_Q = total_q / B, N_KV = total_k / B), an ESTIMATE the row marks
(``lengths: mean``) and carries as an :class:`Assumption`: the (q, k) pairs over every split the
recorded totals and ``max_seqlen_q`` / ``max_seqlen_k`` allow (derivation in
models/attention/varlen_bounds.py; FLOPs only, the bytes are exact).
Signatures: PyTorch native_functions.yaml (checked against torch 2.13 schemas);
flash_attn/flash_attn_interface.py (flash-attn 2.6+ ``torch.library`` custom ops).
"""

from __future__ import annotations

import msgspec

from perfreport.errors import ModelError
from perfreport.models.args import arg_bool, arg_float, arg_int, tensor, tensor_opt
from perfreport.models.base import Assumption, PerfModel
from perfreport.models.dtypes import bytes_per_element, precision_of
from perfreport.models.attention.varlen_bounds import pair_bounds
from perfreport.stats.chunks import chunk_stats

BWD_FACTOR = 2.5  # backward FLOPs / forward (module doc: 5 matmuls of the forward's 2)


class Layout(msgspec.Struct, frozen=True):
    layout: str = "BHND"  # BHND | BNHD (THD when cu_seqlens is a tensor)
    q: int = 0
    k: int = 1
    v: int = 2
    dropout: int | None = None
    causal: int | None = None  # bool argument
    mask_type: int | None = None  # mem-efficient custom_mask_type (0 none, 1 TL, 2 BR)
    align: str = "top_left"
    cu_q: int | None = None
    win_left: int | None = None
    win_right: int | None = None
    d_out: int | None = None  # backward: grad of output
    out: int | None = None  # backward: forward output
    max_q: int | None = None  # varlen: max_seqlen_q (int), max_seqlen_k at max_q + 1


def causal_pairs(n_q: float, n_kv: float, align: str) -> float:
    if align == "bottom_right":
        return n_q * n_kv - n_q * n_q / 2 if n_q <= n_kv else n_kv * n_kv / 2
    return n_q * n_q / 2 if n_q <= n_kv else n_q * n_kv - n_kv * n_kv / 2


class AttentionFwd(PerfModel):
    category = "SDPA_fwd"
    kind = "matrix"
    spec = Layout()
    backward = False

    def __init__(self, op):
        super().__init__(op)
        s = self.spec
        q, k, v = tensor(op, s.q, "query"), tensor(op, s.k, "key"), tensor(op, s.v, "value")
        self.q, self.k, self.v = q, k, v
        cu = tensor_opt(op, s.cu_q) if s.cu_q is not None else None
        self.varlen = cu is not None
        if self.varlen:
            if not (len(q.shape) == len(k.shape) == len(v.shape) == 3) or len(cu.shape) != 1:
                raise ModelError(f"{op.name}: varlen expects [tokens, heads, dim] and 1-d cu_seqlens")
            self.B = cu.shape[0] - 1
            if self.B < 1:
                raise ModelError(f"{op.name}: empty cu_seqlens")
            (tq, self.H_Q, self.d_qk), (tk, self.H_KV, _), (_, _, self.d_v) = q.shape, k.shape, v.shape
            self.N_Q, self.N_KV = tq / self.B, tk / self.B
            self.total_q, self.total_k = tq, tk
            mq = s.max_q
            self.max_q = arg_int(op, mq, None) if mq is not None else None
            self.max_k = arg_int(op, mq + 1, None) if mq is not None else None
        else:
            if not (len(q.shape) == len(k.shape) == len(v.shape) == 4):
                raise ModelError(f"{op.name}: expects 4-d query/key/value ({s.layout})")
            if s.layout == "BHND":
                self.B, self.H_Q, self.N_Q, self.d_qk = q.shape
                _, self.H_KV, self.N_KV, _ = k.shape
            else:
                self.B, self.N_Q, self.H_Q, self.d_qk = q.shape
                _, self.N_KV, self.H_KV, _ = k.shape
            self.d_v = v.shape[-1]
        if k.shape[-1] != self.d_qk or self.H_KV == 0 or self.H_Q % self.H_KV:
            raise ModelError(f"{op.name}: inconsistent q/k shapes {list(q.shape)} {list(k.shape)}")
        self.dropout = arg_float(op, s.dropout, 0.0) if s.dropout is not None else 0.0
        self.align = s.align
        if s.mask_type is not None:
            mt = arg_int(op, s.mask_type, 0)
            self.causal = mt in (1, 2)
            self.align = "bottom_right" if mt == 2 else "top_left"
        else:
            self.causal = bool(arg_bool(op, s.causal, False)) if s.causal is not None else False
        wl = arg_int(op, s.win_left, -1) if s.win_left is not None else -1
        wr = arg_int(op, s.win_right, -1) if s.win_right is not None else -1
        self.window = (wl, wr) if wl is not None and wl >= 0 else None

    def pairs(self) -> float:
        p = causal_pairs(self.N_Q, self.N_KV, self.align) if self.causal else self.N_Q * self.N_KV
        if self.window is not None:
            wl, wr = self.window
            p = min(p, self.N_Q * (wl + 1 + max(wr, 0)))
        return p

    def params(self) -> dict:
        p = {
            "B": self.B,
            "N_Q": self.N_Q,
            "H_Q": self.H_Q,
            "N_KV": self.N_KV,
            "H_KV": self.H_KV,
            "d_h_qk": self.d_qk,
            "d_h_v": self.d_v,
            "causal": self.causal,
            "dropout": self.dropout,
            "dtype": self.q.dtype,
        }
        if self.varlen:
            p["varlen"] = True
        if self.window is not None:
            p["window"] = self.window
        return p

    def fwd_flops_at(self, pairs: float) -> float:
        """Forward FLOPs of a batch with ``pairs`` (q, k) pairs in all: 2·H_Q·P·(d_qk + d_v)."""
        return 2.0 * self.H_Q * pairs * (self.d_qk + self.d_v)

    def flops_at(self, pairs: float) -> float:
        """This op's FLOPs at ``pairs`` pairs (forward; AttentionBwd: BWD_FACTOR × forward)."""
        return self.fwd_flops_at(pairs)

    def fwd_flops(self) -> float:
        return self.fwd_flops_at(self.B * self.pairs())

    def flops(self) -> float:
        return self.fwd_flops()

    def out_bytes(self) -> float:
        return self.q.numel / self.d_qk * self.d_v * bytes_per_element(self.q.dtype)

    def bytes(self) -> float:
        return self.q.nbytes + self.k.nbytes + self.v.nbytes + self.out_bytes()

    def precision(self) -> str:
        return precision_of(self.q.dtype)

    def assumptions(self) -> list[Assumption]:
        """Varlen on mean lengths: the per-sequence split is unknown (models/attention/varlen_bounds.py)."""
        if not self.varlen or getattr(self, "chunk_pairs", None) is not None:
            return []
        point = self.B * self.pairs()
        lo, hi = pair_bounds(self.B, self.total_q, self.total_k, self.max_q, self.max_k, self.causal, self.align)
        if self.window is not None:
            wl, wr = self.window
            lo, hi = min(lo, self.total_q), min(hi, self.total_q * (wl + 1 + max(wr, 0)))
        lo, hi = min(lo, point), max(hi, point)
        nb = self.bytes()
        mx = "/".join("?" if m is None else str(m) for m in (self.max_q, self.max_k))
        return [
            Assumption(
                f"sequence lengths: mean {self.N_Q:g} query / {self.N_KV:g} key tokens over "
                f"{self.B} sequences (total {self.total_q} / {self.total_k}, max_seqlen {mx}); the "
                f"split is not recorded: {point:g} (q, k) pairs, bounds {lo:g} … {hi:g}",
                nb,
                nb,
                self.flops_at(lo),
                self.flops_at(hi),
            )
        ]


class AttentionBwd(AttentionFwd):
    category = "SDPA_bwd"
    backward = True

    def flops_at(self, pairs: float) -> float:
        return BWD_FACTOR * self.fwd_flops_at(pairs)

    def flops(self) -> float:
        return BWD_FACTOR * self.fwd_flops()

    def bytes(self) -> float:
        qkv = self.q.nbytes + self.k.nbytes + self.v.nbytes
        return 2 * qkv + 2 * self.out_bytes()  # read Q,K,V,O,dO; write dQ,dK,dV


# ---- forward ops -------------------------------------------------------------------
class SdpaFlash(AttentionFwd):
    """aten::_scaled_dot_product_flash_attention(q, k, v, dropout_p, is_causal, return_debug_mask, scale)"""

    spec = Layout("BHND", dropout=3, causal=4)


class SdpaEfficient(AttentionFwd):
    """aten::_scaled_dot_product_efficient_attention(q, k, v, attn_bias, compute_log_sumexp, dropout_p, is_causal, scale)"""

    spec = Layout("BHND", dropout=5, causal=6)


class SdpaCudnn(AttentionFwd):
    """aten::_scaled_dot_product_cudnn_attention(q, k, v, attn_bias, compute_log_sumexp, dropout_p, is_causal, return_debug_mask, scale)"""

    spec = Layout("BHND", dropout=5, causal=6)


class SdpaOverrideable(AttentionFwd):
    """aten::_scaled_dot_product_fused_attention_overrideable(q, k, v, attn_bias, dropout_p, is_causal, ...)"""

    spec = Layout("BHND", dropout=4, causal=5)


class FlashAttentionForward(AttentionFwd):
    """aten::_flash_attention_forward(q, k, v, cum_seq_q, cum_seq_k, max_q, max_k, dropout_p, is_causal, return_debug_mask, scale, window_size_left, window_size_right, ...)"""

    spec = Layout("BNHD", dropout=7, causal=8, cu_q=3, win_left=11, win_right=12, max_q=5)


class EfficientAttentionForward(AttentionFwd):
    """aten::_efficient_attention_forward(q, k, v, bias, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k, dropout_p, custom_mask_type, ...)"""

    spec = Layout("BNHD", dropout=8, mask_type=9, cu_q=4, max_q=6)


class FlashAttnForward(AttentionFwd):
    """flash_attn::_flash_attn_forward(q, k, v, dropout_p, softmax_scale, causal, window_size_left, window_size_right, softcap, alibi_slopes, return_softmax)"""

    spec = Layout("BNHD", dropout=3, causal=5, win_left=6, win_right=7, align="bottom_right")


class _OnChunkStats:
    """Mixin: varlen pairs summed over the step's sequences (see the module doc)."""

    needs = ("iteration",)

    def __init__(self, op):
        super().__init__(op)
        self.chunk_pairs = self._chunk_pairs() if self.varlen else None

    def _chunk_pairs(self) -> float | None:
        try:
            s = chunk_stats(self.op)
        except ModelError:
            return None
        c, g = s.prefill, s.decode
        sq, sk = c.sq + g.sq, c.sk + g.sk
        if sq != self.q.shape[0] or sk != self.k.shape[0]:
            return None  # the annotation is not this call's batch
        sqsk, sqsq = c.sqsk + g.sqsk, c.sqsq + g.sqsq
        p = sqsk - sqsq / 2 if self.causal else float(sqsk)
        if self.window is not None:
            wl, wr = self.window
            p = min(p, sq * (wl + 1 + max(wr, 0)))
        return p

    def fwd_flops(self) -> float:
        if self.chunk_pairs is None:
            return super().fwd_flops()
        return self.fwd_flops_at(self.chunk_pairs)

    def params(self) -> dict:
        p = super().params()
        if self.varlen:
            p["lengths"] = "chunk statistics" if self.chunk_pairs is not None else "mean"
        return p


class FlashAttnVarlenForward(_OnChunkStats, AttentionFwd):
    """flash_attn::_flash_attn_varlen_forward(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k, dropout_p, softmax_scale, causal, window_size_left, window_size_right, ...)"""

    spec = Layout("THD", dropout=7, causal=9, cu_q=3, win_left=10, win_right=11, align="bottom_right", max_q=5)


# ---- backward ops ------------------------------------------------------------------
class SdpaFlashBackward(AttentionBwd):
    """aten::_scaled_dot_product_flash_attention_backward(grad_out, q, k, v, out, logsumexp, cum_seq_q, cum_seq_k, max_q, max_k, dropout_p, is_causal, ...)"""

    spec = Layout("BHND", q=1, k=2, v=3, d_out=0, out=4, dropout=10, causal=11)


class SdpaEfficientBackward(AttentionBwd):
    """aten::_scaled_dot_product_efficient_attention_backward(grad_out_, q, k, v, attn_bias, out, logsumexp, philox_seed, philox_offset, dropout_p, grad_input_mask, is_causal, scale)"""

    spec = Layout("BHND", q=1, k=2, v=3, d_out=0, out=5, dropout=9, causal=11)


class SdpaCudnnBackward(AttentionBwd):
    """aten::_scaled_dot_product_cudnn_attention_backward(grad_out, q, k, v, out, logsumexp, philox_seed, philox_offset, attn_bias, cum_seq_q, cum_seq_k, max_q, max_k, dropout_p, is_causal, scale)"""

    spec = Layout("BHND", q=1, k=2, v=3, d_out=0, out=4, dropout=13, causal=14)


class FlashAttentionBackward(AttentionBwd):
    """aten::_flash_attention_backward(grad_out, q, k, v, out, logsumexp, cum_seq_q, cum_seq_k, max_q, max_k, dropout_p, is_causal, rng_state, unused, scale, window_size_left, window_size_right)"""

    spec = Layout(
        "BNHD", q=1, k=2, v=3, d_out=0, out=4, cu_q=6, dropout=10, causal=11, win_left=15, win_right=16, max_q=8
    )


class EfficientAttentionBackward(AttentionBwd):
    """aten::_efficient_attention_backward(grad_out_, q, k, v, bias, out, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k, logsumexp, dropout_p, philox_seed, philox_offset, custom_mask_type, ...)"""

    spec = Layout("BNHD", q=1, k=2, v=3, d_out=0, out=5, cu_q=6, dropout=11, mask_type=14, max_q=8)


class FlashAttnBackward(AttentionBwd):
    """flash_attn::_flash_attn_backward(dout, q, k, v, out, softmax_lse, dq, dk, dv, dropout_p, softmax_scale, causal, window_size_left, window_size_right, ...)"""

    spec = Layout(
        "BNHD", q=1, k=2, v=3, d_out=0, out=4, dropout=9, causal=11, win_left=12, win_right=13, align="bottom_right"
    )


class FlashAttnVarlenBackward(_OnChunkStats, AttentionBwd):
    """flash_attn::_flash_attn_varlen_backward(dout, q, k, v, out, softmax_lse, dq, dk, dv, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k, dropout_p, softmax_scale, causal, window_size_left, window_size_right, ...)"""

    spec = Layout(
        "THD",
        q=1,
        k=2,
        v=3,
        d_out=0,
        out=4,
        cu_q=9,
        dropout=13,
        causal=15,
        win_left=16,
        win_right=17,
        align="bottom_right",
        max_q=11,
    )


__all__ = [n for n in dir() if n[:1].isupper() and n not in ("ModelError", "PerfModel", "Assumption")]
