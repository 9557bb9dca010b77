"""Paged-attention decode in Triton (one source for NVIDIA CUDA and AMD HIP).

Work decomposition
    grid = (num_seqs, H_KV, num_partitions). One program owns one sequence, one KV head and one
    range of pages ("partition", split-K over the context). Its tile holds every query row that
    reads that KV head: rows = q_len * (H_Q / H_KV), row r = token (r // G), query head
    kv_head * G + r % G, padded to BLOCK_M >= 16 for ``tl.dot``. Each KV page is therefore read
    from memory once per (sequence, KV head), whatever the GQA ratio and query length.

Per iteration the program loads BLOCK_N tokens (one page of 64, or four pages of 16), gathers
their block ids from the block table (cast to int64 before any stride product, so caches over
2 GiB address correctly), loads K^T and V, dequantizes FP8 in registers (FP8 e4m3 values are
exact in bf16; the per-tensor K scale is folded into the softmax scale and the V scale is applied
once at the end; both are read from device tensors, never synced), and runs an online softmax
in fp32 with exp2. Head dims need not be powers of two: D = A + B with A the largest power of two
<= D and B the rest rounded up to a power of two (192 = 128 + 64: no padded MMA work).

Causality: token t of a sequence with context ctx (ctx includes the q_len new tokens) sees keys
0 .. ctx - q_len + t. A row that sees no key produces zeros.

Output
    DIRECT (one partition): the program normalizes and writes the bf16 output itself; no
    workspace and no second launch. Otherwise it writes fp32 partials (running max in the log2
    domain, running sum, unnormalized accumulator of width Dv) and ``_pa_decode_reduce`` merges
    the partitions that hold pages (computed from the context length on the device).

Layouts (``IS_5D``): NHD K/V ``[blocks, page, H_KV, D]``; 5D K ``[blocks, H_KV, Dk/X, page, X]``,
V ``[blocks, H_KV, Dv, page]``. The last dimension of each cache must be contiguous.

Only APIs present in both triton 3.6 and 3.9 are used. The host wrapper and its validation live
in :mod:`perfreport.kernels.paged_attention_host`.
"""
import triton
import triton.language as tl

NEG_BIG = tl.constexpr(-1.0e30)  # finite "minus infinity" for running maxima: keeps exp2(m_old - m_new) finite


@triton.jit
def _mma_in(x, DOT_F32: tl.constexpr):
    """Operand dtype of tl.dot: bf16 on GPUs; fp32 under TRITON_INTERPRET (its bf16 dot is wrong)."""
    if DOT_F32:
        return x.to(tl.float32)
    return x.to(tl.bfloat16)


@triton.jit
def _load_kt(k_ptr, tok_off, page_ok, D0: tl.constexpr, DC: tl.constexpr, DK: tl.constexpr,
             X: tl.constexpr, stride_kx, IS_5D: tl.constexpr, DOT_F32: tl.constexpr):
    """K^T for head dims D0 .. D0+DC as a [DC, BLOCK_N] tile, dequantized to the MMA dtype."""
    d = D0 + tl.arange(0, DC)
    if IS_5D:
        d_off = (d // X).to(tl.int64) * stride_kx + (d % X)
    else:
        d_off = d.to(tl.int64)
    mask = (d < DK)[:, None] & page_ok[None, :]  # page-granular: stale slots are masked in s
    k = tl.load(k_ptr + tok_off[None, :] + d_off[:, None], mask=mask, other=0.0)
    return _mma_in(k, DOT_F32)


@triton.jit
def _load_v(v_ptr, tok_off, page_ok, tok_ok, D0: tl.constexpr, DC: tl.constexpr, DV: tl.constexpr,
            stride_vd, IS_5D: tl.constexpr, DOT_F32: tl.constexpr):
    """V for head dims D0 .. D0+DC as a [BLOCK_N, DC] tile, dequantized to the MMA dtype.

    The unit stride is spelled out (dims in NHD, tokens in 5D) so loads vectorize."""
    d = D0 + tl.arange(0, DC)
    if IS_5D:
        d_off = d.to(tl.int64) * stride_vd
    else:
        d_off = d.to(tl.int64)
    v = tl.load(v_ptr + tok_off[:, None] + d_off[None, :],
                mask=page_ok[:, None] & (d < DV)[None, :], other=0.0)
    # slots past the context inside the last page hold stale bytes (maybe NaN): zero them so
    # p = 0 cannot meet NaN in the MMA. Masking after the load keeps it vectorized.
    v = tl.where(tok_ok[:, None], v, 0.0)
    return _mma_in(v, DOT_F32)


@triton.jit
def _pa_decode_partition(
    q_ptr, k_ptr, v_ptr, bt_ptr, ctx_ptr, ks_ptr, vs_ptr,
    out_ptr, m_ptr, l_ptr, acc_ptr,
    qk_scale, v_mult,
    stride_qt, stride_qh, stride_ot, stride_oh, stride_bt,
    stride_kb, stride_kh, stride_kt, stride_kx,
    stride_vb, stride_vh, stride_vx,
    max_pages, pages_per_part, num_parts,
    Q_LEN: tl.constexpr, GROUP: tl.constexpr, BLOCK_M: tl.constexpr,
    DK: tl.constexpr, DKA: tl.constexpr, DKB: tl.constexpr,
    DV: tl.constexpr, DVA: tl.constexpr, DVB: tl.constexpr,
    PAGE: tl.constexpr, BLOCK_N: tl.constexpr, X: tl.constexpr, IS_5D: tl.constexpr,
    K_SCALE_T: tl.constexpr, V_SCALE_T: tl.constexpr, DIRECT: tl.constexpr,
    DOT_F32: tl.constexpr,
):
    seq = tl.program_id(0)
    kvh = tl.program_id(1)
    part = tl.program_id(2)
    num_kv = tl.num_programs(1)
    ROWS: tl.constexpr = Q_LEN * GROUP
    PAGES_PER_TILE: tl.constexpr = BLOCK_N // PAGE

    ctx = tl.load(ctx_ptr + seq)
    n_pages = tl.minimum((ctx + PAGE - 1) // PAGE, max_pages)  # never read past the table
    p_lo = part * pages_per_part
    p_hi = tl.minimum(p_lo + pages_per_part, n_pages)
    if part == num_parts - 1:  # the last partition takes every remaining page
        p_hi = n_pages

    # ---- the query tile: every row that reads this KV head -------------------------------
    r = tl.arange(0, BLOCK_M)
    t = r // GROUP
    hq = kvh * GROUP + r % GROUP
    row_ok = r < ROWS
    q_row = (seq * Q_LEN + t).to(tl.int64) * stride_qt + hq.to(tl.int64) * stride_qh
    dqa = tl.arange(0, DKA)
    qa = tl.load(q_ptr + q_row[:, None] + dqa[None, :], mask=row_ok[:, None], other=0.0)
    qa = _mma_in(qa, DOT_F32)
    if DKB > 0:
        dqb = DKA + tl.arange(0, DKB)
        qb = tl.load(q_ptr + q_row[:, None] + dqb[None, :],
                     mask=row_ok[:, None] & (dqb < DK)[None, :], other=0.0)
        qb = _mma_in(qb, DOT_F32)

    scale2 = qk_scale
    if K_SCALE_T:
        scale2 = scale2 * tl.load(ks_ptr).to(tl.float32)
    visible = ctx - Q_LEN + 1 + t  # keys seen by each row (causal across the new tokens)

    m_i = tl.full([BLOCK_M], NEG_BIG, tl.float32)
    l_i = tl.zeros([BLOCK_M], tl.float32)
    acc_a = tl.zeros([BLOCK_M, DVA], tl.float32)
    if DVB > 0:
        acc_b = tl.zeros([BLOCK_M, DVB], tl.float32)

    n = tl.arange(0, BLOCK_N)
    within = n % PAGE
    bt_row = bt_ptr + seq.to(tl.int64) * stride_bt
    for pg in range(p_lo, p_hi, PAGES_PER_TILE):
        page = pg + n // PAGE
        pos = page * PAGE + within
        page_ok = page < p_hi
        tok_ok = page_ok & (pos < ctx)
        blk = tl.load(bt_row + page, mask=page_ok, other=0).to(tl.int64)
        k_tok = blk * stride_kb + kvh * stride_kh + within * stride_kt
        if IS_5D:  # V [blocks, H_KV, Dv, page]: tokens contiguous, stride_vx = dim stride
            v_tok = blk * stride_vb + kvh * stride_vh + within
        else:  # V [blocks, page, H_KV, Dv]: dims contiguous, stride_vx = token stride
            v_tok = blk * stride_vb + kvh * stride_vh + within * stride_vx

        kt = _load_kt(k_ptr, k_tok, page_ok, 0, DKA, DK, X, stride_kx, IS_5D, DOT_F32)
        s = tl.dot(qa, kt)
        if DKB > 0:
            kt_b = _load_kt(k_ptr, k_tok, page_ok, DKA, DKB, DK, X, stride_kx, IS_5D, DOT_F32)
            s += tl.dot(qb, kt_b)
        s = s * scale2
        keep = (pos[None, :] < visible[:, None]) & tok_ok[None, :]
        s = tl.where(keep, s, float("-inf"))

        m_new = tl.maximum(m_i, tl.max(s, 1))
        alpha = tl.exp2(m_i - m_new)
        p = tl.exp2(s - m_new[:, None])
        l_i = l_i * alpha + tl.sum(p, 1)
        pb = _mma_in(p, DOT_F32)
        va = _load_v(v_ptr, v_tok, page_ok, tok_ok, 0, DVA, DV, stride_vx, IS_5D, DOT_F32)
        acc_a = acc_a * alpha[:, None] + tl.dot(pb, va)
        if DVB > 0:
            vb = _load_v(v_ptr, v_tok, page_ok, tok_ok, DVA, DVB, DV, stride_vx, IS_5D, DOT_F32)
            acc_b = acc_b * alpha[:, None] + tl.dot(pb, vb)
        m_i = m_new

    dva = tl.arange(0, DVA)
    if DIRECT:
        vm = v_mult
        if V_SCALE_T:
            vm = vm * tl.load(vs_ptr).to(tl.float32)
        inv = tl.where(l_i > 0.0, vm / tl.maximum(l_i, 1e-20), 0.0)
        o_row = (seq * Q_LEN + t).to(tl.int64) * stride_ot + hq.to(tl.int64) * stride_oh
        tl.store(out_ptr + o_row[:, None] + dva[None, :],
                 (acc_a * inv[:, None]).to(out_ptr.dtype.element_ty), mask=row_ok[:, None])
        if DVB > 0:
            dvb = DVA + tl.arange(0, DVB)
            tl.store(out_ptr + o_row[:, None] + dvb[None, :],
                     (acc_b * inv[:, None]).to(out_ptr.dtype.element_ty),
                     mask=row_ok[:, None] & (dvb < DV)[None, :])
    else:
        wid = (seq * num_kv + kvh) * num_parts + part
        row_id = wid.to(tl.int64) * ROWS + r
        ok = row_ok & ((r * 0 + p_lo) < n_pages)  # partitions without pages write nothing
        tl.store(m_ptr + row_id, m_i, mask=ok)
        tl.store(l_ptr + row_id, l_i, mask=ok)
        tl.store(acc_ptr + row_id[:, None] * DV + dva[None, :], acc_a, mask=ok[:, None])
        if DVB > 0:
            dvb = DVA + tl.arange(0, DVB)
            tl.store(acc_ptr + row_id[:, None] * DV + dvb[None, :], acc_b,
                     mask=ok[:, None] & (dvb < DV)[None, :])


@triton.jit
def _pa_decode_reduce(
    out_ptr, m_ptr, l_ptr, acc_ptr, ctx_ptr, vs_ptr, v_mult,
    stride_ot, stride_oh, max_pages, pages_per_part, num_parts,
    Q_LEN: tl.constexpr, GROUP: tl.constexpr, BLOCK_M: tl.constexpr,
    DV: tl.constexpr, DVA: tl.constexpr, DVB: tl.constexpr, PAGE: tl.constexpr,
    V_SCALE_T: tl.constexpr,
):
    """Merge the partitions of one (sequence, KV head): out = sum(2^(m_p - M) acc_p) / sum(2^(m_p - M) l_p)."""
    seq = tl.program_id(0)
    kvh = tl.program_id(1)
    num_kv = tl.num_programs(1)
    ROWS: tl.constexpr = Q_LEN * GROUP
    ctx = tl.load(ctx_ptr + seq)
    n_pages = tl.minimum((ctx + PAGE - 1) // PAGE, max_pages)
    n_act = tl.minimum((n_pages + pages_per_part - 1) // pages_per_part, num_parts)  # with pages

    r = tl.arange(0, BLOCK_M)
    t = r // GROUP
    hq = kvh * GROUP + r % GROUP
    row_ok = r < ROWS
    dva = tl.arange(0, DVA)
    m_run = tl.full([BLOCK_M], NEG_BIG, tl.float32)
    l_run = tl.zeros([BLOCK_M], tl.float32)
    o_a = tl.zeros([BLOCK_M, DVA], tl.float32)
    if DVB > 0:
        dvb = DVA + tl.arange(0, DVB)
        o_b = tl.zeros([BLOCK_M, DVB], tl.float32)
    for p in range(0, n_act):
        row_id = ((seq * num_kv + kvh) * num_parts + p).to(tl.int64) * ROWS + r
        m_p = tl.load(m_ptr + row_id, mask=row_ok, other=NEG_BIG)
        l_p = tl.load(l_ptr + row_id, mask=row_ok, other=0.0)
        m_new = tl.maximum(m_run, m_p)
        a = tl.exp2(m_run - m_new)
        b = tl.exp2(m_p - m_new)
        l_run = l_run * a + l_p * b
        acc = tl.load(acc_ptr + row_id[:, None] * DV + dva[None, :], mask=row_ok[:, None], other=0.0)
        o_a = o_a * a[:, None] + acc * b[:, None]
        if DVB > 0:
            acc2 = tl.load(acc_ptr + row_id[:, None] * DV + dvb[None, :],
                           mask=row_ok[:, None] & (dvb < DV)[None, :], other=0.0)
            o_b = o_b * a[:, None] + acc2 * b[:, None]
        m_run = m_new

    vm = v_mult
    if V_SCALE_T:
        vm = vm * tl.load(vs_ptr).to(tl.float32)
    inv = tl.where(l_run > 0.0, vm / tl.maximum(l_run, 1e-20), 0.0)
    o_row = (seq * Q_LEN + t).to(tl.int64) * stride_ot + hq.to(tl.int64) * stride_oh
    tl.store(out_ptr + o_row[:, None] + dva[None, :], (o_a * inv[:, None]).to(out_ptr.dtype.element_ty),
             mask=row_ok[:, None])
    if DVB > 0:
        tl.store(out_ptr + o_row[:, None] + dvb[None, :], (o_b * inv[:, None]).to(out_ptr.dtype.element_ty),
                 mask=row_ok[:, None] & (dvb < DV)[None, :])


def split_dim(d: int) -> tuple[int, int]:
    """D = A + B: A the largest power of two <= D, B the rest rounded up to a power of two (or 0)."""
    a = 1 << (d.bit_length() - 1)
    rest = d - a
    return a, (triton.next_power_of_2(rest) if rest else 0)


def launch(grid_main, grid_reduce, args: dict, cfg: dict, num_warps: int, num_stages: int) -> None:
    """Launch the partition kernel (and the reduce kernel unless ``cfg['DIRECT']``)."""
    _pa_decode_partition[grid_main](
        args["q"], args["k"], args["v"], args["bt"], args["ctx"], args["ks"], args["vs"],
        args["out"], args["m"], args["l"], args["acc"],
        args["qk_scale"], args["v_mult"],
        *args["q_strides"], *args["o_strides"], args["stride_bt"],
        *args["k_strides"], *args["v_strides"],
        args["max_pages"], args["pages_per_part"], args["num_parts"],
        Q_LEN=cfg["Q_LEN"], GROUP=cfg["GROUP"], BLOCK_M=cfg["BLOCK_M"],
        DK=cfg["DK"], DKA=cfg["DKA"], DKB=cfg["DKB"], DV=cfg["DV"], DVA=cfg["DVA"], DVB=cfg["DVB"],
        PAGE=cfg["PAGE"], BLOCK_N=cfg["BLOCK_N"], X=cfg["X"], IS_5D=cfg["IS_5D"],
        K_SCALE_T=cfg["K_SCALE_T"], V_SCALE_T=cfg["V_SCALE_T"], DIRECT=cfg["DIRECT"],
        DOT_F32=cfg["DOT_F32"], num_warps=num_warps, num_stages=num_stages,
    )
    if not cfg["DIRECT"]:
        _pa_decode_reduce[grid_reduce](
            args["out"], args["m"], args["l"], args["acc"], args["ctx"], args["vs"], args["v_mult"],
            *args["o_strides"], args["max_pages"], args["pages_per_part"], args["num_parts"],
            Q_LEN=cfg["Q_LEN"], GROUP=cfg["GROUP"], BLOCK_M=cfg["BLOCK_M"],
            DV=cfg["DV"], DVA=cfg["DVA"], DVB=cfg["DVB"], PAGE=cfg["PAGE"],
            V_SCALE_T=cfg["V_SCALE_T"], num_warps=4,
        )
