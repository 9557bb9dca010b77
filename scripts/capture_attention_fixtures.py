"""Capture the varlen / paged / MLA attention fixture trace (CPU, a real torch.profiler run).

    . .venv/bin/activate && python scripts/capture_attention_fixtures.py [--out fixtures]

Registers stand-in custom ops with torch.library under the exact names and positional
argument order of aiter's torch interfaces (``csrc/include/torch/mha_varlen_fwd.h``,
``fmha_v3_varlen_fwd.h``, ``mha_batch_prefill.h``, ``csrc/include/attention_ragged.h``, the
2024 ``mla_decode_stage1_asm_fwd`` in ``csrc/include/mla.h``), flash-attn's
``flash_attn_interface.py``, vLLM's ``csrc/torch_bindings.cpp`` and FlashInfer's ``decode.py``,
through scripts/stand_in_library.py; each stand-in computes a small real attention in torch
(scripts/stand_in_attention.py: per sequence, causal over the new tokens). Every call runs inside a
vLLM detailed iteration annotation whose statistics match its shapes, under
``torch.profiler.profile(activities=[CPU], record_shapes=True)``, and the trace is written to
``fixtures/inference_attention_ops.json.gz``.

Calls, in trace order (H_Q 8, H_KV 2, head dim 64 unless noted; queries BF16):

1. ``aiter::mha_varlen_fwd``: 2 prefill requests of 16 and 8 new tokens, no cache ->
   ``execute_24_context_2(sq24sk24sqsq320sqsk320)_generation_0(sq0sk0sqsq0sqsk0)``;
2. ``aiter::fmha_v3_varlen_fwd``: the same step;
3. ``aiter::mha_batch_prefill``: 1 chunk of 16 new tokens on 8 cached, NHD pages of 16
   ``[blocks, 16, 2, 64]`` BF16 -> ``execute_16_context_1(sq16sk24sqsq256sqsk384)_generation_0(...)``;
4. ``aiter::paged_attention_ragged``: 4 decode requests, KV lengths 37, 64, 100, 130, FP8
   cache stored as uint8 (NHD pages of 16) ->
   ``execute_4_context_0(...)_generation_4(sq4sk331sqsq4sqsk331)``;
5. ``aiter::mla_decode_stage1_asm_fwd``: the same 4 decode requests, H_Q 16, one latent
   head of 576 (512 + 64 rope), d_v 512, pages of 16 ``[blocks, 16, 1, 576]`` BF16, split
   buffer ``[4, 2, 16, 512]``;
6. ``flash_attn::_flash_attn_varlen_forward`` (flash-attn 2.6+ ``torch.library`` op, causal):
   the prefill step of 1., then a mixed step of one chunk of 16 new tokens on 8 cached and 3
   decode requests with KV lengths 10, 20, 30 (K/V ``[84, 2, 64]``) ->
   ``execute_19_context_1(sq16sk24sqsq256sqsk384)_generation_3(sq3sk60sqsq3sqsk60)``;
7. vLLM ``_C::cutlass_mla_decode(out, q_nope, q_pe, kv_c_and_k_pe_cache, seq_lens,
   page_table, scale)`` (``csrc/torch_bindings.cpp``): the decode step of 5. with q_nope
   ``[4, 16, 512]``, q_pe ``[4, 16, 64]``, the same latent pages as ``[blocks, 16, 576]``;
8. ``batch_decode_with_kv_cache_dtype_q_bf16_dtype_kv_e4m3_...::run`` (FlashInfer v0.2.7 –
   v0.3.x ``csrc/batch_decode_jit_pybind.cu`` order, the op a JIT module named by its URI
   registers): the decode step of 4. on ``float8_e4m3fn`` NHD pages (kv_layout_code 0,
   window_left -1).

Seeded and re-runnable (only timestamps differ between runs).
"""

from __future__ import annotations

import sys
from pathlib import Path

from fixture_io import capture_cpu, fixture_main  # scripts/ is on sys.path when a script runs
from stand_in_attention import DECODE, DECODE_KV, attend
from stand_in_library import define

import torch

H_Q, H_KV, D, PAGE = 8, 2, 64, 16
MLA_HQ, MLA_DQK, MLA_DV = 16, 576, 512
PREFILL = "execute_24_context_2(sq24sk24sqsq320sqsk320)_generation_0(sq0sk0sqsq0sqsk0)"
CHUNK = "execute_16_context_1(sq16sk24sqsq256sqsk384)_generation_0(sq0sk0sqsq0sqsk0)"
MIXED = "execute_19_context_1(sq16sk24sqsq256sqsk384)_generation_3(sq3sk60sqsq3sqsk60)"


def _gather(cache, pages, n):
    """NHD pages [blocks, page, H, D] -> the first n tokens [n, H, D] (uint8 = FP8 storage)."""
    t = cache[pages.long()].flatten(0, 1)[:n]
    if t.dtype == torch.uint8:
        t = t.view(torch.float8_e4m3fnuz)
    return t.float()


def _varlen(q, k, v, cu_q, cu_k, scale):
    out = torch.empty(q.shape[0], q.shape[1], v.shape[2], dtype=q.dtype)
    for i in range(len(cu_q) - 1):
        a, b, c, d = int(cu_q[i]), int(cu_q[i + 1]), int(cu_k[i]), int(cu_k[i + 1])
        out[a:b] = attend(q[a:b], k[c:d], v[c:d], scale).to(q.dtype)
    return out


def mha_varlen_fwd(
    q,
    k,
    v,
    cu_seqlens_q,
    cu_seqlens_k,
    max_seqlen_q,
    max_seqlen_k,
    min_seqlen_q,
    p_dropout,
    softmax_scale,
    logits_soft_cap,
    zero_tensors,
    is_causal,
    window_size_left,
    window_size_right,
    return_softmax_lse,
    return_dropout_randval,
    out=None,
):
    return [_varlen(q, k, v, cu_seqlens_q.tolist(), cu_seqlens_k.tolist(), softmax_scale)]


def mha_batch_prefill(
    q,
    k,
    v,
    cu_seqlens_q,
    kv_indptr,
    kv_page_indices,
    max_seqlen_q,
    max_seqlen_k,
    p_dropout,
    softmax_scale,
    logits_soft_cap,
    zero_tensors,
    is_causal,
    window_size_left,
    window_size_right,
    return_softmax_lse,
    return_dropout_randval,
    out=None,
    kv_last_page_lens=None,
):
    res = torch.empty_like(q)
    cu, ind = cu_seqlens_q.tolist(), kv_indptr.tolist()
    for i in range(len(cu) - 1):
        pages = kv_page_indices[ind[i] : ind[i + 1]]
        n = (len(pages) - 1) * PAGE + int(kv_last_page_lens[i])
        res[cu[i] : cu[i + 1]] = attend(
            q[cu[i] : cu[i + 1]], _gather(k, pages, n), _gather(v, pages, n), softmax_scale
        ).to(q.dtype)
    return [res]


def paged_attention_ragged(
    out,
    workspace_buffer,
    query,
    key_cache,
    value_cache,
    scale,
    kv_indptr,
    kv_page_indices,
    kv_last_page_lens,
    block_size,
    max_num_partitions,
    alibi_slopes,
    kv_cache_dtype,
    kv_cache_layout,
    logits_soft_cap,
    k_scale,
    v_scale,
    fp8_out_scale,
    partition_size,
):
    ind = kv_indptr.tolist()
    for i in range(len(ind) - 1):
        pages = kv_page_indices[ind[i] : ind[i + 1]]
        n = (len(pages) - 1) * block_size + int(kv_last_page_lens[i])
        k = _gather(key_cache, pages, n) * float(k_scale)
        v = _gather(value_cache, pages, n) * float(v_scale)
        out[i : i + 1] = attend(query[i : i + 1], k, v, scale).to(out.dtype)


def mla_decode_stage1_asm_fwd(
    Q, KV, qo_indptr, kv_indptr, kv_page_indices, kv_last_page_lens, max_seqlen_q, softmax_scale, splitData, splitLse
):
    ind = kv_indptr.tolist()
    for i in range(len(ind) - 1):
        pages = kv_page_indices[ind[i] : ind[i + 1]]
        n = (len(pages) - 1) * PAGE + int(kv_last_page_lens[i])
        lat = _gather(KV, pages, n)  # [n, 1, 576]: V = first 512 dims
        o = attend(Q[i : i + 1], lat, lat[..., :MLA_DV], softmax_scale)
        splitData[i] = o[0].to(splitData.dtype)[None].expand(splitData.shape[1], -1, -1)
        splitLse[i] = 0.0


def flash_attn_varlen_forward(
    q,
    k,
    v,
    cu_seqlens_q,
    cu_seqlens_k,
    max_seqlen_q,
    max_seqlen_k,
    dropout_p,
    softmax_scale,
    causal,
    window_size_left=-1,
    window_size_right=-1,
    softcap=0.0,
    alibi_slopes=None,
    return_softmax=False,
    block_table=None,
    leftpad_k=None,
    seqused_k=None,
):
    out = _varlen(q, k, v, cu_seqlens_q.tolist(), cu_seqlens_k.tolist(), softmax_scale)
    lse = torch.zeros(q.shape[1], q.shape[0], dtype=torch.float32)
    return out, lse, torch.empty(0, dtype=q.dtype), torch.zeros(2, dtype=torch.int64)


def cutlass_mla_decode(out, q_nope, q_pe, kv_c_and_k_pe_cache, seq_lens, page_table, scale):
    q = torch.cat([q_nope, q_pe], -1)
    for i, n in enumerate(seq_lens.tolist()):
        nb = (n + PAGE - 1) // PAGE
        lat = kv_c_and_k_pe_cache[page_table[i, :nb].long()].flatten(0, 1)[:n, None].float()
        out[i] = attend(q[i : i + 1], lat, lat[..., :MLA_DV], scale)[0].to(out.dtype)


FI_DECODE = (
    "batch_decode_with_kv_cache_dtype_q_bf16_dtype_kv_e4m3_dtype_o_bf16_dtype_idx_i32_"
    "head_dim_qk_64_head_dim_vo_64_posenc_0_use_swa_False_use_logits_cap_False"
)


def flashinfer_batch_decode(
    float_workspace_buffer,
    int_workspace_buffer,
    plan_info_vec,
    q,
    paged_k_cache,
    paged_v_cache,
    paged_kv_indptr,
    paged_kv_indices,
    paged_kv_last_page_len,
    o,
    maybe_lse,
    kv_layout_code,
    window_left,
    enable_pdl,
    alibi_slopes,
    logits_soft_cap,
    sm_scale,
    rope_scale,
    rope_theta,
):
    ind = paged_kv_indptr.tolist()
    for i in range(len(ind) - 1):
        pages = paged_kv_indices[ind[i] : ind[i + 1]]
        n = (len(pages) - 1) * paged_k_cache.shape[1] + int(paged_kv_last_page_len[i])
        k, v = _gather(paged_k_cache, pages, n), _gather(paged_v_cache, pages, n)
        o[i : i + 1] = attend(q[i : i + 1], k, v, sm_scale).to(o.dtype)


def register_ops() -> None:
    tail = (
        "int max_seqlen_q, int max_seqlen_k, int min_seqlen_q, float p_dropout, "
        "float softmax_scale, float logits_soft_cap, bool zero_tensors, bool is_causal, "
        "int window_size_left, int window_size_right, bool return_softmax_lse, "
        "bool return_dropout_randval, Tensor? out=None) -> Tensor[]"
    )
    for name in ("mha_varlen_fwd", "fmha_v3_varlen_fwd"):
        define(
            "aiter",
            f"{name}(Tensor q, Tensor k, Tensor v, Tensor cu_seqlens_q, Tensor cu_seqlens_k, {tail}",
            mha_varlen_fwd,
        )
    define(
        "aiter",
        "mha_batch_prefill(Tensor q, Tensor k, Tensor v, Tensor cu_seqlens_q, "
        "Tensor kv_indptr, Tensor kv_page_indices, int max_seqlen_q, int max_seqlen_k, "
        "float p_dropout, float softmax_scale, float logits_soft_cap, bool zero_tensors, "
        "bool is_causal, int window_size_left, int window_size_right, "
        "bool return_softmax_lse, bool return_dropout_randval, Tensor? out=None, "
        "Tensor? kv_last_page_lens=None) -> Tensor[]",
        mha_batch_prefill,
    )
    define(
        "aiter",
        "paged_attention_ragged(Tensor(a!) out, Tensor workspace_buffer, "
        "Tensor query, "
        "Tensor key_cache, Tensor value_cache, float scale, Tensor kv_indptr, "
        "Tensor kv_page_indices, Tensor? kv_last_page_lens, int block_size, "
        "int max_num_partitions, Tensor? alibi_slopes, str kv_cache_dtype, "
        "str kv_cache_layout, float logits_soft_cap, Tensor k_scale, Tensor v_scale, "
        "Tensor? fp8_out_scale, int partition_size) -> ()",
        paged_attention_ragged,
    )
    define(
        "aiter",
        "mla_decode_stage1_asm_fwd(Tensor Q, Tensor KV, Tensor qo_indptr, "
        "Tensor kv_indptr, "
        "Tensor kv_page_indices, Tensor kv_last_page_lens, int max_seqlen_q, "
        "float softmax_scale, Tensor(a!) splitData, Tensor(b!) splitLse) -> ()",
        mla_decode_stage1_asm_fwd,
    )
    define(
        "flash_attn",
        "_flash_attn_varlen_forward(Tensor q, Tensor k, Tensor v, "
        "Tensor cu_seqlens_q, "
        "Tensor cu_seqlens_k, int max_seqlen_q, int max_seqlen_k, float dropout_p, "
        "float softmax_scale, bool causal, int window_size_left=-1, "
        "int window_size_right=-1, float softcap=0.0, Tensor? alibi_slopes=None, "
        "bool return_softmax=False, Tensor? block_table=None, Tensor? leftpad_k=None, "
        "Tensor? seqused_k=None) -> (Tensor, Tensor, Tensor, Tensor)",
        flash_attn_varlen_forward,
    )
    define(
        "_C",
        "cutlass_mla_decode(Tensor(a!) out, Tensor q_nope, Tensor q_pe, "
        "Tensor kv_c_and_k_pe_cache, Tensor seq_lens, Tensor page_table, float scale) -> ()",
        cutlass_mla_decode,
    )
    define(
        FI_DECODE,
        "run(Tensor(a!) float_workspace_buffer, Tensor(b!) int_workspace_buffer, "
        "Tensor plan_info_vec, Tensor q, Tensor(c!)? paged_k_cache, "
        "Tensor(d!)? paged_v_cache, Tensor paged_kv_indptr, Tensor paged_kv_indices, "
        "Tensor paged_kv_last_page_len, Tensor(e!) o, Tensor(f!)? maybe_lse, "
        "int kv_layout_code, int window_left, bool enable_pdl, Tensor? alibi_slopes, "
        "float logits_soft_cap, float sm_scale, float rope_scale, float rope_theta) -> ()",
        flashinfer_batch_decode,
    )


def _pages_for(kv_lens, gen, num_blocks):
    counts = [(n + PAGE - 1) // PAGE for n in kv_lens]
    perm = torch.randperm(num_blocks, generator=gen)[: sum(counts)].to(torch.int32)
    indptr = [0]
    for c in counts:
        indptr.append(indptr[-1] + c)
    last = [n - (c - 1) * PAGE for n, c in zip(kv_lens, counts)]
    i32 = lambda x: torch.tensor(x, dtype=torch.int32)
    return perm, i32(indptr), i32(last)


def _run(gen) -> None:
    bf = torch.bfloat16
    rnd = lambda *s: torch.randn(*s, generator=gen) * 0.5
    i32 = lambda x: torch.tensor(x, dtype=torch.int32)
    scale = D**-0.5
    q, k, v = rnd(24, H_Q, D).to(bf), rnd(24, H_KV, D).to(bf), rnd(24, H_KV, D).to(bf)
    cu = i32([0, 16, 24])
    for op in (torch.ops.aiter.mha_varlen_fwd, torch.ops.aiter.fmha_v3_varlen_fwd):
        with torch.profiler.record_function(PREFILL):
            op(q, k, v, cu, cu, 16, 16, 8, 0.0, scale, 0.0, False, True, -1, 0, False, False)
    kc, vc = rnd(8, PAGE, H_KV, D).to(bf), rnd(8, PAGE, H_KV, D).to(bf)
    pages, indptr, last = _pages_for([24], gen, 8)
    with torch.profiler.record_function(CHUNK):
        torch.ops.aiter.mha_batch_prefill(
            rnd(16, H_Q, D).to(bf),
            kc,
            vc,
            i32([0, 16]),
            indptr,
            pages,
            16,
            24,
            0.0,
            scale,
            0.0,
            False,
            True,
            -1,
            0,
            False,
            False,
            None,
            last,
        )
    fp8 = lambda t: t.to(torch.float8_e4m3fnuz).view(torch.uint8)
    kc, vc = fp8(rnd(40, PAGE, H_KV, D)), fp8(rnd(40, PAGE, H_KV, D))
    pages, indptr, last = _pages_for(DECODE_KV, gen, 40)
    out = torch.empty(4, H_Q, D, dtype=bf)
    one = torch.tensor([1.0])
    with torch.profiler.record_function(DECODE):
        torch.ops.aiter.paged_attention_ragged(
            out,
            torch.empty(64, dtype=torch.uint8),
            rnd(4, H_Q, D).to(bf),
            kc,
            vc,
            scale,
            indptr,
            pages,
            last,
            PAGE,
            1,
            None,
            "fp8",
            "NHD",
            0.0,
            one,
            one,
            None,
            256,
        )
    lat = rnd(40, PAGE, 1, MLA_DQK).to(bf)
    split = torch.empty(4, 2, MLA_HQ, MLA_DV, dtype=torch.float32)
    lse = torch.empty(4, 2, MLA_HQ, 1, dtype=torch.float32)
    with torch.profiler.record_function(DECODE):
        torch.ops.aiter.mla_decode_stage1_asm_fwd(
            rnd(4, MLA_HQ, MLA_DQK).to(bf), lat, i32([0, 1, 2, 3, 4]), indptr, pages, last, 1, MLA_DQK**-0.5, split, lse
        )
    bt = torch.zeros(4, 9, dtype=torch.int32)
    for i in range(4):
        row = pages[indptr[i] : indptr[i + 1]]
        bt[i, : len(row)] = row
    mla_out = torch.empty(4, MLA_HQ, MLA_DV, dtype=bf)
    with torch.profiler.record_function(DECODE):
        torch.ops._C.cutlass_mla_decode(
            mla_out,
            rnd(4, MLA_HQ, MLA_DV).to(bf),
            rnd(4, MLA_HQ, MLA_DQK - MLA_DV).to(bf),
            lat.flatten(2),
            i32(DECODE_KV),
            bt,
            MLA_DQK**-0.5,
        )
    e4m3 = lambda t: t.to(torch.float8_e4m3fn)
    fk, fv = e4m3(rnd(40, PAGE, H_KV, D)), e4m3(rnd(40, PAGE, H_KV, D))
    fo = torch.empty(4, H_Q, D, dtype=bf)
    with torch.profiler.record_function(DECODE):
        getattr(torch.ops, FI_DECODE).run(
            torch.empty(64, dtype=torch.uint8),
            torch.empty(64, dtype=torch.uint8),
            torch.zeros(4, dtype=torch.long),
            rnd(4, H_Q, D).to(bf),
            fk,
            fv,
            indptr,
            pages,
            last,
            fo,
            None,
            0,
            -1,
            False,
            None,
            0.0,
            scale,
            1.0,
            1e4,
        )
    fa = torch.ops.flash_attn._flash_attn_varlen_forward
    with torch.profiler.record_function(PREFILL):
        fa(q, k, v, cu, cu, 16, 16, 0.0, scale, True, -1, -1)
    # mixed step: a chunk of 16 new tokens on 8 cached + 3 decode requests (KV 10, 20, 30);
    # K/V hold every key of each sequence (total_k = 24 + 60 = 84)
    mq, mk, mv = rnd(19, H_Q, D).to(bf), rnd(84, H_KV, D).to(bf), rnd(84, H_KV, D).to(bf)
    with torch.profiler.record_function(MIXED):
        fa(mq, mk, mv, i32([0, 16, 17, 18, 19]), i32([0, 24, 34, 54, 84]), 16, 30, 0.0, scale, True, -1, -1)
    if not (torch.isfinite(out.float()).all() and torch.isfinite(split).all()):
        raise SystemExit("stand-in attention produced non-finite output")


def capture(path: Path) -> int:
    register_ops()
    gen = torch.Generator().manual_seed(4321)
    return capture_cpu(path, Path(__file__).name, lambda: _run(gen))


def main(argv=None) -> int:
    return fixture_main(argv, __doc__, "inference_attention_ops.json.gz", capture)


if __name__ == "__main__":
    sys.exit(main())
