"""Split-K reduce of the paged-attention decode kernel: merge the partitions of every query row.

grid = (num_seqs * H_KV * rows,): one program per query row (row r of a KV head is token r // G,
query head kv_head * G + r % G), so the headline shape (batch 32, 16:1 GQA, q_len 4) runs 2,048
programs instead of one per (sequence, KV head). A program reads the P partials of its row in
chunks of P_CHUNK partitions; each chunk's loads are independent of the previous chunk's results
(two passes: the maxima first, then the weighted sums), so they can all be in flight at once.

    M = max_p m_p,  w_p = 2^(m_p - M),  out = sum_p w_p acc_p / sum_p w_p l_p

where partition p holds max m_p (log2 domain), sum l_p and accumulator acc_p (fp32), or with
PART_BF16 its own normalized output o_p = acc_p / l_p in bf16 (then acc_p = o_p * l_p).
A partition without pages (the same balanced split as the partition kernel: p owns pages
[p*n//P, (p+1)*n//P)) wrote nothing and is masked out here, so its stale bytes are never read.
"""

import triton
import triton.language as tl

from perfreport.pa.kernel.partition_kernel import NEG_BIG


@triton.jit
def _pa_decode_reduce(
    out_ptr,
    m_ptr,
    l_ptr,
    acc_ptr,
    ctx_ptr,
    stride_ot,
    stride_oh,
    num_kv,
    max_pages,
    num_parts,
    Q_LEN: tl.constexpr,
    GROUP: tl.constexpr,
    DV: tl.constexpr,
    DV_BLOCK: tl.constexpr,
    PAGE: tl.constexpr,
    P_CHUNK: tl.constexpr,
    PART_BF16: tl.constexpr,
):
    ROWS: tl.constexpr = Q_LEN * GROUP
    pid = tl.program_id(0)
    r = pid % ROWS
    sk = pid // ROWS  # seq * H_KV + kv_head
    seq = sk // num_kv
    kvh = sk % num_kv
    ctx = tl.load(ctx_ptr + seq)
    n_pages = tl.maximum(tl.minimum((ctx + PAGE - 1) // PAGE, max_pages), 0)

    base = sk.to(tl.int64) * num_parts  # partition 0 of this (sequence, KV head)
    pc = tl.arange(0, P_CHUNK)
    # pass 1: the largest partition maximum
    m_max = tl.full([P_CHUNK], NEG_BIG, tl.float32)
    for p0 in range(0, num_parts, P_CHUNK):
        p = p0 + pc
        lo = (p.to(tl.int64) * n_pages) // num_parts
        hi = ((p + 1).to(tl.int64) * n_pages) // num_parts
        has = (p < num_parts) & (hi > lo)
        m_p = tl.load(m_ptr + (base + p) * ROWS + r, mask=has, other=NEG_BIG)
        m_max = tl.maximum(m_max, m_p)
    big_m = tl.max(m_max, 0)
    # pass 2: weighted sums (chunks independent of each other)
    d = tl.arange(0, DV_BLOCK)
    d_ok = d < DV
    num = tl.zeros([DV_BLOCK], tl.float32)
    den = tl.zeros([P_CHUNK], tl.float32)
    for p0 in range(0, num_parts, P_CHUNK):
        p = p0 + pc
        lo = (p.to(tl.int64) * n_pages) // num_parts
        hi = ((p + 1).to(tl.int64) * n_pages) // num_parts
        has = (p < num_parts) & (hi > lo)
        row_id = (base + p) * ROWS + r
        m_p = tl.load(m_ptr + row_id, mask=has, other=NEG_BIG)
        l_p = tl.load(l_ptr + row_id, mask=has, other=0.0)
        acc = tl.load(acc_ptr + row_id[:, None] * DV + d[None, :], mask=has[:, None] & d_ok[None, :], other=0.0).to(
            tl.float32
        )
        w = tl.where(has, tl.exp2(m_p - big_m), 0.0)
        den += w * l_p
        if PART_BF16:
            w = w * l_p
        num += tl.sum(acc * w[:, None], 0)
    total = tl.sum(den, 0)
    inv = tl.where(total > 0.0, 1.0 / tl.maximum(total, 1e-30), 0.0)
    t = r // GROUP
    hq = kvh * GROUP + r % GROUP
    o_row = (seq * Q_LEN + t).to(tl.int64) * stride_ot + hq.to(tl.int64) * stride_oh
    tl.store(out_ptr + o_row + d, (num * inv).to(out_ptr.dtype.element_ty), mask=d_ok)


__all__ = []
