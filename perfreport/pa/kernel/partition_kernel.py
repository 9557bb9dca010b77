"""Paged-attention decode in Triton (one source for NVIDIA CUDA and AMD HIP): the partition kernel.

Work decomposition
    grid = (num_seqs, H_KV, num_partitions). One program owns one sequence, one KV head and one
    range of pages ("partition", split-K over the context). Its tile holds every query row that
    reads that KV head: rows = q_len * (H_Q / H_KV), row r = token (r // G), query head
    kv_head * G + r % G, padded to BLOCK_M >= 16 for ``tl.dot``. Each KV page is therefore read
    from memory once per (sequence, KV head), whatever the GQA ratio and query length.

Balanced partitions: partition p of a sequence with n pages owns pages [p*n//P, (p+1)*n//P),
computed on the device from that sequence's own context length, so every partition of every
sequence holds floor(n/P) or ceil(n/P) pages (a short sequence leaves some partitions empty).

Pipelining: the block ids of tile i+1 are loaded during tile i (a loop-carried value), so the
K/V addresses of a tile never depend on a load of the same iteration and Triton's software
pipeliner keeps ``num_stages - 1`` tiles of K/V copies in flight (checked in the sm_90a PTX by
``tests/pa/kernel/test_compiled_checks.py``: the main loop waits on a non-zero ``cp.async`` group count).

Per tile (BLOCK_N tokens: part of a page, one page, or several pages) the program loads K^T and V,
converts them to the MMA dtype, and runs an online softmax in fp32 with exp2. Head dims need not
be powers of two: D = A + B with A the largest power of two <= D and B the rest rounded up to a
power of two (192 = 128 + 64: no padded MMA work).

MMA dtypes (``MMA``): 0 bf16 (BF16 caches); 1 f16 (FP8 caches dequantized in registers; e4m3
values are exact in f16, the P operand keeps 11 bits); 2 fp8 (FP8 caches used as they are: Q is
quantized per row to FP8 with its own scale and P is scaled by FP8_MAX before its MMA, so no
conversion sits between the cache and the tensor cores).

Scales (``K_SCALE`` / ``V_SCALE``): 0 none, 1 one per tensor, 2 one per KV head ``[H_KV]``,
3 one per token and KV head ``[num_blocks, H_KV, page]`` (the layout of aiter's shuffled caches).
K and V scales are independent (any mode each, their own strides). K scales multiply the logits;
a per-token V scale multiplies P's columns before the PV MMA (the softmax sum uses the unscaled
P; on the FP8-MMA path the tile's scales are first divided by their maximum, which multiplies
the tile's PV product instead, so FP8 P never saturates); tensor/head V scales multiply the
output once.

Causality: token t of a sequence with context ctx (ctx includes the q_len new tokens) sees keys
0 .. ctx - q_len + t. A row that sees no key produces zeros.

Layouts: K ``NHD`` ``[blocks, page, H_KV, Dk]`` or 5D ``[blocks, H_KV, Dk/X, page, X]``; V
(``V_LAYOUT``) 0 NHD ``[blocks, page, H_KV, Dv]``, 1 ``[blocks, H_KV, Dv, page]``, 2 vectorized
5D ``[blocks, H_KV, page/X, Dv, X]``. The last dimension of each cache must be contiguous.

Output: DIRECT (one partition) normalizes and writes the output itself. Otherwise each partition
writes its max (log2 domain), sum and accumulator (fp32, or bf16 normalized by its own sum with
``PART_BF16``) and :mod:`perfreport.pa.kernel.reduce_kernel` merges them.

Only APIs present in both triton 3.6 and 3.9 are used.
"""

import triton
import triton.language as tl

NEG_BIG = tl.constexpr(-1.0e30)  # finite "minus infinity" for running maxima: keeps exp2(m_old - m_new) finite


@triton.jit
def _mma_in(x, MMA: tl.constexpr, DOT_F32: tl.constexpr):
    """Operand dtype of tl.dot. Under TRITON_INTERPRET the dot runs in fp32 (its bf16 dot is wrong):
    the value is first rounded to the GPU's operand dtype, so the rounding error is the same."""
    if MMA == 0:
        y = x.to(tl.bfloat16)
    elif MMA == 1:
        y = x.to(tl.float16)
    else:
        y = x  # already FP8
    if DOT_F32:
        y = y.to(tl.float32)
    return y


@triton.jit
def _to_fp8(x, like_ptr, FP8_MAX: tl.constexpr, DOT_F32: tl.constexpr):
    """x (fp32, |x| <= FP8_MAX) rounded to e4m3: the FP8 dtype of ``like_ptr`` on a GPU. Under the
    interpreter (whose fp32 -> fp8 cast drops the carry into the exponent: 0.4857 -> 0.25) the
    rounding is done in fp32 instead: 3 mantissa bits, subnormals below 2^-6 (e4m3fn, max 448) or
    2^-7 (e4m3fnuz, max 240), round half up."""
    if DOT_F32:
        if FP8_MAX == 240.0:
            min_e = -7.0
        else:
            min_e = -6.0
        a = tl.abs(x)
        e = tl.maximum(tl.floor(tl.log2(tl.maximum(a, 1e-30))), min_e)
        quantum = tl.exp2(e - 3.0)
        r = tl.minimum(tl.floor(a / quantum + 0.5) * quantum, FP8_MAX)
        return tl.where(x < 0.0, -r, r)
    return x.to(like_ptr.dtype.element_ty)


@triton.jit
def _scale_vec(s_ptr, blk, kvh, within, page_ok, tok_ok, s_b, s_h, MODE: tl.constexpr):
    """Per-token scales of one tile ([BLOCK_N], MODE 3) read beside the cache: a page-granular
    (vectorizable) load, then stale slots set to 0 (they may hold NaN)."""
    sc = tl.load(s_ptr + blk * s_b + kvh * s_h + within, mask=page_ok, other=0.0).to(tl.float32)
    return tl.where(tok_ok, sc, 0.0)


@triton.jit
def _scale_one(s_ptr, kvh, s_h, MODE: tl.constexpr):
    """The tensor (MODE 1) or KV-head (MODE 2) scale, or 1."""
    if MODE == 1:
        return tl.load(s_ptr).to(tl.float32)
    elif MODE == 2:
        return tl.load(s_ptr + kvh * s_h).to(tl.float32)
    else:
        return 1.0


@triton.jit
def _load_kt(
    k_ptr,
    tok_off,
    page_ok,
    D0: tl.constexpr,
    DC: tl.constexpr,
    DK: tl.constexpr,
    X: tl.constexpr,
    stride_kx,
    K_5D: tl.constexpr,
    MMA: tl.constexpr,
    DOT_F32: tl.constexpr,
):
    """K^T for head dims D0 .. D0+DC as a [DC, BLOCK_N] tile in the MMA dtype."""
    d = D0 + tl.arange(0, DC)
    if K_5D:
        d_off = (d // X).to(tl.int64) * stride_kx + (d % X)
    else:
        d_off = d.to(tl.int64)
    mask = (d < DK)[:, None] & page_ok[None, :]  # page-granular: stale slots are masked in s
    k = tl.load(k_ptr + tok_off[None, :] + d_off[:, None], mask=mask, other=0.0)
    return _mma_in(k, MMA, DOT_F32)


@triton.jit
def _load_v(
    v_ptr,
    tok_off,
    page_ok,
    tok_ok,
    D0: tl.constexpr,
    DC: tl.constexpr,
    DV: tl.constexpr,
    stride_vd,
    V_LAYOUT: tl.constexpr,
    VX: tl.constexpr,
    MMA: tl.constexpr,
    DOT_F32: tl.constexpr,
):
    """V for head dims D0 .. D0+DC as a [BLOCK_N, DC] tile in the MMA dtype.

    The unit stride is spelled out (dims in NHD, tokens otherwise) so loads vectorize."""
    d = D0 + tl.arange(0, DC)
    if V_LAYOUT == 0:
        d_off = d.to(tl.int64)
    elif V_LAYOUT == 1:
        d_off = d.to(tl.int64) * stride_vd  # the page: a power of two >= 16 (divisible by 16)
    else:
        # vectorized 5D: the Dv stride is VX itself (checked on the host), a constexpr, so each
        # run of VX tokens is provably one aligned 16-byte vector (a runtime stride of 8 is not
        # divisible by 16: the loads fell back to 2-byte scalars and left the pipeline)
        d_off = d.to(tl.int64) * VX
    v = tl.load(v_ptr + tok_off[:, None] + d_off[None, :], mask=page_ok[:, None] & (d < DV)[None, :], other=0.0)
    # slots past the context inside the last page hold stale bytes (maybe NaN): zero them so
    # p = 0 cannot meet NaN in the MMA. Masking after the load keeps it vectorized.
    v = tl.where(tok_ok[:, None], v, 0.0)
    return _mma_in(v, MMA, DOT_F32)


@triton.jit
def _pa_decode_partition(
    q_ptr,
    k_ptr,
    v_ptr,
    bt_ptr,
    ctx_ptr,
    ks_ptr,
    vs_ptr,
    out_ptr,
    m_ptr,
    l_ptr,
    acc_ptr,
    qk_scale,
    v_mult,
    stride_qt,
    stride_qh,
    stride_ot,
    stride_oh,
    stride_bt,
    stride_kb,
    stride_kh,
    stride_kt,
    stride_kx,
    stride_vb,
    stride_vh,
    stride_vt,
    stride_vd,
    stride_ksb,
    stride_ksh,
    stride_vsb,
    stride_vsh,
    max_pages,
    num_parts,
    Q_LEN: tl.constexpr,
    GROUP: tl.constexpr,
    BLOCK_M: tl.constexpr,
    DK: tl.constexpr,
    DKA: tl.constexpr,
    DKB: tl.constexpr,
    DV: tl.constexpr,
    DVA: tl.constexpr,
    DVB: tl.constexpr,
    PAGE: tl.constexpr,
    BLOCK_N: tl.constexpr,
    X: tl.constexpr,
    K_5D: tl.constexpr,
    V_LAYOUT: tl.constexpr,
    VX: tl.constexpr,
    K_SCALE: tl.constexpr,
    V_SCALE: tl.constexpr,
    MMA: tl.constexpr,
    FP8_MAX: tl.constexpr,
    DIRECT: tl.constexpr,
    PART_BF16: tl.constexpr,
    DOT_F32: tl.constexpr,
):
    seq = tl.program_id(0)
    kvh = tl.program_id(1)
    part = tl.program_id(2)
    num_kv = tl.num_programs(1)
    ROWS: tl.constexpr = Q_LEN * GROUP
    ID_RUN: tl.constexpr = PAGE if PAGE < BLOCK_N else BLOCK_N  # tokens of a tile sharing a block id

    ctx = tl.load(ctx_ptr + seq)
    n_pages = tl.minimum((ctx + PAGE - 1) // PAGE, max_pages)  # never read past the table
    n_pages = tl.maximum(n_pages, 0)
    p_lo = ((part.to(tl.int64) * n_pages) // num_parts).to(tl.int32)
    p_hi = (((part + 1).to(tl.int64) * n_pages) // num_parts).to(tl.int32)

    # ---- the query tile: every row that reads this KV head -------------------------------
    r = tl.arange(0, BLOCK_M)
    t = r // GROUP
    hq = kvh * GROUP + r % GROUP
    row_ok = r < ROWS
    q_row = (seq * Q_LEN + t).to(tl.int64) * stride_qt + hq.to(tl.int64) * stride_qh
    dqa = tl.arange(0, DKA)
    qa = tl.load(q_ptr + q_row[:, None] + dqa[None, :], mask=row_ok[:, None], other=0.0).to(tl.float32)
    q_amax = tl.max(tl.abs(qa), 1)
    if DKB > 0:
        dqb = DKA + tl.arange(0, DKB)
        qb = tl.load(q_ptr + q_row[:, None] + dqb[None, :], mask=row_ok[:, None] & (dqb < DK)[None, :], other=0.0).to(
            tl.float32
        )
        q_amax = tl.maximum(q_amax, tl.max(tl.abs(qb), 1))
    row_scale = tl.full([BLOCK_M], 1.0, tl.float32)
    if MMA == 2:  # per-row FP8 quantization of Q: q ~= q8 * row_scale
        row_scale = tl.where(q_amax > 0.0, q_amax / FP8_MAX, 1.0)
        qa = _to_fp8(qa / row_scale[:, None], k_ptr, FP8_MAX, DOT_F32)
        if DKB > 0:
            qb = _to_fp8(qb / row_scale[:, None], k_ptr, FP8_MAX, DOT_F32)
    qa = _mma_in(qa, MMA, DOT_F32)
    if DKB > 0:
        qb = _mma_in(qb, MMA, DOT_F32)
    # logits in the log2 domain: q.k * softmax scale * log2(e) * K scale (* Q's FP8 row scale)
    row_mult = row_scale * (qk_scale * _scale_one(ks_ptr, kvh, stride_ksh, K_SCALE))
    visible = ctx - Q_LEN + 1 + t  # keys seen by each row (causal across the new tokens)

    m_i = tl.full([BLOCK_M], NEG_BIG, tl.float32)
    l_i = tl.zeros([BLOCK_M], tl.float32)
    acc_a = tl.zeros([BLOCK_M, DVA], tl.float32)
    if DVB > 0:
        acc_b = tl.zeros([BLOCK_M, DVB], tl.float32)

    n = tl.arange(0, BLOCK_N)
    bt_row = bt_ptr + seq.to(tl.int64) * stride_bt
    t_lo = p_lo * PAGE  # this partition's token range (whole pages)
    t_hi = p_hi * PAGE
    pos0 = t_lo + n
    blk = tl.load(bt_row + pos0 // PAGE, mask=pos0 < t_hi, other=0).to(tl.int64)  # tile 0's block ids
    blk = tl.max_constancy(blk, ID_RUN)  # one id per page: token offsets stay contiguous (vector loads)
    for t0 in range(t_lo, t_hi, BLOCK_N):
        pos = t0 + n
        within = pos % PAGE
        page_ok = pos < t_hi
        tok_ok = page_ok & (pos < ctx)
        # the next tile's block ids, loaded one tile ahead (consumed next iteration)
        nxt = pos + BLOCK_N
        blk_next = tl.load(bt_row + nxt // PAGE, mask=nxt < t_hi, other=0).to(tl.int64)
        blk_next = tl.max_constancy(blk_next, ID_RUN)
        k_tok = blk * stride_kb + kvh * stride_kh + within * stride_kt
        if V_LAYOUT == 0:  # [blocks, page, H_KV, Dv]: dims contiguous
            v_tok = blk * stride_vb + kvh * stride_vh + within * stride_vt
        elif V_LAYOUT == 1:  # [blocks, H_KV, Dv, page]: tokens contiguous
            v_tok = blk * stride_vb + kvh * stride_vh + within
        else:  # [blocks, H_KV, page/VX, Dv, VX]: VX tokens contiguous
            v_tok = blk * stride_vb + kvh * stride_vh + (within // VX) * stride_vt + within % VX

        kt = _load_kt(k_ptr, k_tok, page_ok, 0, DKA, DK, X, stride_kx, K_5D, MMA, DOT_F32)
        s = tl.dot(qa, kt)
        if DKB > 0:
            kt_b = _load_kt(k_ptr, k_tok, page_ok, DKA, DKB, DK, X, stride_kx, K_5D, MMA, DOT_F32)
            s += tl.dot(qb, kt_b)
        s = s * row_mult[:, None]
        if K_SCALE == 3:
            s = s * _scale_vec(ks_ptr, blk, kvh, within, page_ok, tok_ok, stride_ksb, stride_ksh, K_SCALE)[None, :]
        keep = (pos[None, :] < visible[:, None]) & tok_ok[None, :]
        s = tl.where(keep, s, float("-inf"))

        m_new = tl.maximum(m_i, tl.max(s, 1))
        alpha = tl.exp2(m_i - m_new)
        p = tl.exp2(s - m_new[:, None])
        l_i = l_i * alpha + tl.sum(p, 1)
        pv_mult = 1.0  # what the PV product is multiplied by before it joins the accumulator
        if V_SCALE == 3:
            vsc = _scale_vec(vs_ptr, blk, kvh, within, page_ok, tok_ok, stride_vsb, stride_vsh, V_SCALE)
            if MMA == 2:
                # FP8 P must stay in [0, FP8_MAX]: normalize the scales by the tile's largest, so
                # p * vsc / vmax <= 1 whatever the scales (a scale above 1 saturated P), and put
                # vmax back on the product (the seed design's per-tile V-scale normalization)
                vmax = tl.max(vsc, 0)
                vsc = vsc / tl.where(vmax > 0.0, vmax, 1.0)
                pv_mult = vmax
            p = p * vsc[None, :]
        if MMA == 2:
            p = _to_fp8(p * FP8_MAX, k_ptr, FP8_MAX, DOT_F32)  # P in [0, 1] -> [0, FP8_MAX]
        pb = _mma_in(p, MMA, DOT_F32)
        va = _load_v(v_ptr, v_tok, page_ok, tok_ok, 0, DVA, DV, stride_vd, V_LAYOUT, VX, MMA, DOT_F32)
        acc_a = acc_a * alpha[:, None] + tl.dot(pb, va) * pv_mult
        if DVB > 0:
            vb = _load_v(v_ptr, v_tok, page_ok, tok_ok, DVA, DVB, DV, stride_vd, V_LAYOUT, VX, MMA, DOT_F32)
            acc_b = acc_b * alpha[:, None] + tl.dot(pb, vb) * pv_mult
        m_i = m_new
        blk = blk_next

    p_mult = v_mult * _scale_one(vs_ptr, kvh, stride_vsh, V_SCALE)
    if MMA == 2:
        p_mult = p_mult / FP8_MAX
    dva = tl.arange(0, DVA)
    if DIRECT:
        inv = tl.where(l_i > 0.0, p_mult / tl.maximum(l_i, 1e-20), 0.0)
        o_row = (seq * Q_LEN + t).to(tl.int64) * stride_ot + hq.to(tl.int64) * stride_oh
        tl.store(
            out_ptr + o_row[:, None] + dva[None, :],
            (acc_a * inv[:, None]).to(out_ptr.dtype.element_ty),
            mask=row_ok[:, None],
        )
        if DVB > 0:
            dvb = DVA + tl.arange(0, DVB)
            tl.store(
                out_ptr + o_row[:, None] + dvb[None, :],
                (acc_b * inv[:, None]).to(out_ptr.dtype.element_ty),
                mask=row_ok[:, None] & (dvb < DV)[None, :],
            )
    else:
        wid = (seq * num_kv + kvh) * num_parts + part
        row_id = wid.to(tl.int64) * ROWS + r
        ok = row_ok & ((r * 0 + p_lo) < p_hi)  # partitions without pages write nothing
        tl.store(m_ptr + row_id, m_i, mask=ok)
        tl.store(l_ptr + row_id, l_i, mask=ok)
        if PART_BF16:  # the partition's own normalized output, in bf16 (the reduce reweights it)
            sc = tl.where(l_i > 0.0, p_mult / tl.maximum(l_i, 1e-20), 0.0)
        else:  # the unnormalized fp32 accumulator, V scales applied
            sc = tl.full([BLOCK_M], 1.0, tl.float32) * p_mult
        tl.store(
            acc_ptr + row_id[:, None] * DV + dva[None, :],
            (acc_a * sc[:, None]).to(acc_ptr.dtype.element_ty),
            mask=ok[:, None],
        )
        if DVB > 0:
            dvb = DVA + tl.arange(0, DVB)
            tl.store(
                acc_ptr + row_id[:, None] * DV + dvb[None, :],
                (acc_b * sc[:, None]).to(acc_ptr.dtype.element_ty),
                mask=ok[:, None] & (dvb < DV)[None, :],
            )


__all__ = ["NEG_BIG"]
