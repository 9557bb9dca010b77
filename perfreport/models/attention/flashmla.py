"""FlashMLA decode (DeepSeek MLA, latent KV cache) as vLLM registers it with torch.

Recorded names and positional arguments (sources on GitHub):

* ``_flashmla_C::fwd_kvcache_mla`` -- vllm-project/FlashMLA ``csrc/torch_api.cpp``
  (``TORCH_LIBRARY(_flashmla_C, m)``, Sep 2025 on; upstream deepseek-ai/FlashMLA binds the same
  function with pybind11, which the profiler does not record): (q [b, s_q, h_q, 576], kcache,
  head_size_v, seqlens_k [b], block_table [b, max_blocks], softmax_scale, is_causal,
  tile_scheduler_metadata, num_splits, is_fp8, indices); the Apr - Aug 2025 ``flash_api.cpp``
  of that fork: the same first nine (``main-archive``), + ``descale_q, descale_k`` after the
  FP8 commit a757314; its first form (Feb 2025, commit 575f772, "update to use torch
  library"): (q, kcache, vcache (optional), head_size_v, seqlens_k, block_table,
  softmax_scale, is_causal, tile_scheduler_metadata, num_splits) -- told apart here by
  argument 2: an int (head_size_v) or not;
* ``_flashmla_extension_C::fwd_kvcache_mla_fp8`` -- the fork's ``csrc/extension/torch_api.cpp``:
  (q, kcache, head_size_v, seqlens_k, block_table, softmax_scale, is_causal,
  tile_scheduler_metadata, num_splits, descale_q, descale_k), q and kcache float8_e4m3fn,
  output BF16 (``extension/sm90/dense_fp8/pybind.cpp``: ``out_type = torch::kBFloat16``);
* ``_flashmla_C::dense_decode_fwd`` -- upstream ``csrc/api/dense_decode.h``
  ``dense_attn_decode_interface(q, kcache, head_size_v, seqlens_k, block_table,
  softmax_scale, is_causal, tile_scheduler_metadata, num_splits)``; the same first nine.

Shapes (``csrc/pybind.cpp`` ``fwd_kvcache_mla`` checks): d_qk = 576 (kv_lora_rank 512 + rope
64), head_size_v = 512 (V = the first 512 elements of the same latent, DeepSeek-V2 arXiv
2405.04434 §2.1), kcache ``[blocks, 64, h_kv, 576]`` at the query dtype (BF16/FP16) or,
``is_fp8``, ``[blocks, 64, 1, 656]`` bytes in the "FP8 with scale" format (README: 512
float8_e4m3 + 4 float32 scales + 64 BF16 rope = 656 B per token, dequantized to BF16).
``indices [b, s_q, topk]`` (sparse decode) makes each query attend its topk listed tokens.

Per-request KV lengths (seqlens_k values are not recorded) come from the decode group of the
step's iteration annotation when it matches q: R·s_q = g_sq with R ≤ b (rows past R are CUDA
graph padding); else the block table bounds them, b·s_q … b·max_blocks·page keys (point = the
upper bound, an :class:`~perfreport.models.base.Assumption`).

* pairs = g_sqsk (s_q = 1: the kernel clears is_causal) or g_sqsk − g_sqsq/2 (causal, s_q > 1;
  the other models' bottom-right count); sparse: b·s_q·topk;
* FLOPs = 2·h_q·(d_qk + d_v)·pairs (Q·Kᵀ over 576, P·V over 512);
* bytes = b·s_q·h_q·(d_qk·bpe_Q + d_v·bpe_O) (Q read, O written)
        + N_KV·h_kv·row·bpe_cache (the latent cache read once per KV head, its h_q/h_kv query
          heads sharing it; row = kcache's last dim, 576 or 656 FP8 bytes; V is not read
          again), N_KV = g_sk (sparse: min(g_sk, b·s_q·topk)).

Compute precision: the query dtype (BF16 MMAs on dequantized FP8-with-scale pages; the
dense-FP8 extension takes FP8 q and runs FP8 MMAs).
"""

from __future__ import annotations

from typing import Any

from perfreport.errors import ModelError
from perfreport.models.args import arg_bool, arg_int, concrete, tensor, tensor_opt
from perfreport.models.base import Assumption, PerfModel
from perfreport.models.dtypes import precision_of
from perfreport.models.attention.inference import _bpe
from perfreport.stats.chunks import chunk_stats


class FlashMlaDecode(PerfModel):
    """``_flashmla_C::fwd_kvcache_mla`` / ``dense_decode_fwd`` (see the module doc)."""

    category = "InferenceAttention_fwd"
    kind = "matrix"
    needs = ("iteration",)
    Q, KCACHE = 0, 1
    FP8_FLAG = 9  # is_fp8 (bool) in the Sep 2025 form; a tensor (descale_q) before
    INDICES = 10

    def __init__(self, op):
        super().__init__(op)
        q, kc = tensor(op, self.Q, "q"), tensor(op, self.KCACHE, "kcache")
        if len(q.shape) != 4 or len(kc.shape) != 4:
            raise ModelError(f"{op.name}: expected q [b, s_q, h_q, d] and kcache [blocks, page, h_kv, d]")
        self.b, self.s_q, self.H_Q, self.d_h_qk = q.shape
        _, self.page, self.H_KV, self.row = kc.shape
        first = 2 if concrete(op, 2).strip().lstrip("-").isdigit() else 3  # vcache form: 3
        self.d_h_v = arg_int(op, first)
        if not self.d_h_v or not 0 < self.d_h_v <= self.d_h_qk:
            raise ModelError(
                f"{op.name}: head_size_v (argument {first}) not recorded or "
                f"larger than the query head dim {self.d_h_qk}"
            )
        bt = tensor(op, first + 2, "block_table").shape
        self.max_blocks = bt[1] if len(bt) == 2 else None
        self.causal = bool(arg_bool(op, first + 4, False)) and self.s_q > 1
        self.fp8_with_scale = first == 2 and self._flag(self.FP8_FLAG)
        if not self.fp8_with_scale and self.row != self.d_h_qk:
            raise ModelError(f"{op.name}: q head dim {self.d_h_qk} != cache row {self.row}")
        idx = tensor_opt(op, self.INDICES) if first == 2 and self.INDICES is not None else None
        self.topk = idx.shape[2] if idx is not None and len(idx.shape) == 3 else None
        self.dtype_Q, self.dtype_KV = q.dtype, kc.dtype
        self.bpe_Q, self.bpe_KV = _bpe(op, q.dtype), _bpe(op, kc.dtype)
        self.bpe_O = self.bpe_Q if self.bpe_Q >= 2 else 2  # FP8 q -> BF16 output
        self.stats, self.lengths, self.keys_lo = self._lengths()

    def _flag(self, i: int) -> bool:
        try:
            return bool(arg_bool(self.op, i, False))
        except ModelError:
            return False

    def _lengths(self):
        """((g_sq, g_sk, g_sqsq, g_sqsk), source text, lowest KV count or None)."""
        rows = self.b * self.s_q
        try:
            s = chunk_stats(self.op)
        except ModelError as exc:
            s, why = None, str(exc).split(": ", 1)[-1]
        if s is not None:
            g = s.decode
            r = g.reqs if g.reqs is not None else g.sq // max(self.s_q, 1)
            if g.sq > 0 and g.sq == r * self.s_q and r <= self.b:
                pad = f"; {self.b - r} padded rows" if r < self.b else ""
                return ((g.sq, g.sk, g.sqsq, g.sqsk), f"chunk statistics (decode group{pad})", None)
            why = f"q holds {self.b}x{self.s_q} rows, the decode group {g.sq} tokens"
        if self.max_blocks is None:
            raise ModelError(f"{self.op.name}: {why}; block_table is not 2-d")
        hi = self.b * self.max_blocks * self.page
        return ((rows, hi, self.b * self.s_q**2, self.s_q * hi), f"block table ({why})", rows)

    # -- model --------------------------------------------------------------------------
    def work(self, keys_lo: bool = False) -> tuple[float, float]:
        """(pairs, KV tokens read), at the point or at the lowest KV count."""
        sq, sk, sqsq, sqsk = self.stats
        if keys_lo:
            sk, sqsk = self.keys_lo, self.s_q * self.keys_lo
        pairs = sqsk - sqsq / 2 if self.causal else float(sqsk)
        keys = float(sk)
        if self.topk is not None:
            pairs = float(self.b * self.s_q * self.topk)
            keys = float(min(sk, self.b * self.s_q * self.topk))
        return pairs, keys

    def totals(self, keys_lo: bool = False) -> tuple[float, float]:
        pairs, keys = self.work(keys_lo)
        flops = 2.0 * self.H_Q * (self.d_h_qk + self.d_h_v) * pairs
        new = self.b * self.s_q * self.H_Q * (self.d_h_qk * self.bpe_Q + self.d_h_v * self.bpe_O)
        return flops, float(new + keys * self.H_KV * self.row * self.bpe_KV)

    def flops(self) -> float:
        return self.totals()[0]

    def bytes(self) -> float:
        return self.totals()[1]

    def params(self) -> dict[str, Any]:
        pairs, keys = self.work()
        return {
            "B": self.b,
            "s_q": self.s_q,
            "H_Q": self.H_Q,
            "N_KV": keys,
            "H_KV": self.H_KV,
            "d_h_qk": self.d_h_qk,
            "d_h_v": self.d_h_v,
            "page_size": self.page,
            "cache_row": f"{self.row} x {self.dtype_KV}" + (" (FP8 with scale)" if self.fp8_with_scale else ""),
            "causal": self.causal,
            "topk": self.topk,
            "lengths": self.lengths,
            "dtype_Q": self.dtype_Q,
            "dtype_KV": self.dtype_KV,
            "dtype_KV_from": f"kcache (argument {self.KCACHE})",
            "bytes_KV": keys * self.H_KV * self.row * self.bpe_KV,
        }

    def assumptions(self) -> list[Assumption]:
        if self.keys_lo is None:
            return []
        f, b = self.totals()
        fl, bl = self.totals(keys_lo=True)
        return [
            Assumption(
                f"KV lengths: {self.stats[1]} keys (every block-table column full; bounds "
                f"{self.keys_lo} … {self.stats[1]}: seqlens_k values are not recorded)",
                bytes_min=bl,
                bytes_max=b,
                flops_min=fl,
                flops_max=f,
            )
        ]

    def precision(self) -> str:
        return precision_of(self.dtype_Q)


class FlashMlaDecodeFp8(FlashMlaDecode):
    """``_flashmla_extension_C::fwd_kvcache_mla_fp8`` (dense FP8 q and cache; module doc)."""

    FP8_FLAG = None  # positions 9/10 are descale_q / descale_k
    INDICES = None

    def _flag(self, i) -> bool:
        return False


__all__ = ["FlashMlaDecode", "FlashMlaDecodeFp8"]
