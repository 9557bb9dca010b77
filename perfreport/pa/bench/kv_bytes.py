"""Bytes our Triton decode kernel moves as implemented, to set beside the ideal roofline bytes.

The perf model (``perfreport/models/attention/inference.py``) charges the ideal traffic: Q, the
output and every cached K/V element once. The kernel (``perfreport/pa/kernel/``) moves more:

* ``kv``: K and V in whole pages: ``S * H_KV * ceil(ctx / page) * page * (Dk + Dv) * bpe_KV``
  (a page's stale tail slots are loaded with the page and masked in registers);
* ``kv_scales``: per-token FP8 scales, ``S * H_KV * ceil(ctx / page) * page * 2 * 4``;
* ``block_table``: one int32 id per page per (sequence, KV head): ``S * H_KV * pages * 4``;
* ``query``: every partition reloads its rows: ``S * H_KV * P * rows * Dk * 2`` (bf16,
  ``rows = q_len * H_Q / H_KV``);
* ``output``: ``S * q_len * H_Q * Dv * 2``;
* ``partials`` (P > 1): written by the partitions and read once by the reduce:
  ``2 * S * H_KV * P * rows * (2 * 4 + Dv * acc_bytes)`` (max and sum fp32, accumulator fp32 = 4
  or bf16 = 2 bytes); partitions without pages write nothing, so only ``min(P, pages)`` count.

``context_lens`` reads (4 bytes per program) are left out (< 1e-5 of the total at any shape the
bench runs). Everything is counted as DRAM traffic: re-reads that hit L2 (Q, block ids) make the
true figure a little lower, so this is an upper bound of what the kernel must move.
"""

from __future__ import annotations

from perfreport.pa.bench.case import PACase


def impl_bytes(
    case: PACase,
    partitions: int,
    *,
    partials: str = "fp32",
    scale_mode: str = "tensor",
    v_scale_mode: str | None = None,
) -> dict:
    """Byte terms (and ``total``) of one launch of our kernel for ``case`` with ``partitions``
    (``scale_mode`` K's FP8 scales, ``v_scale_mode`` V's, default the same: 4 bytes per token each
    when per token)."""
    s, hkv, hq, q = case.batch, case.kv_heads, case.q_heads, case.q_len
    dk, dv, page = case.head_dim, case.v_head_dim, case.page
    bpe_kv = 2 if case.kv_dtype == "bf16" else 1
    pages = case.pages_per_seq
    rows = q * (hq // hkv)
    p = max(1, int(partitions))
    filled = min(p, pages)
    acc_bytes = 2 if partials == "bf16" else 4
    per_token = (scale_mode == "token") + ((v_scale_mode or scale_mode) == "token")
    t = {
        "kv": s * hkv * pages * page * (dk + dv) * bpe_kv,
        "kv_scales": s * hkv * pages * page * 4 * per_token if case.kv_dtype == "fp8" else 0,
        "block_table": s * hkv * pages * 4,
        "query": s * hkv * p * rows * dk * 2,
        "output": s * q * hq * dv * 2,
        "partials": 2 * s * hkv * filled * rows * (2 * 4 + dv * acc_bytes) if p > 1 else 0,
    }
    t["total"] = sum(t.values())
    return t


__all__ = ["impl_bytes"]
