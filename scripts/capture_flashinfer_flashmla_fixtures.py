"""Capture the FlashInfer prefill / FlashMLA decode fixture trace (CPU, a real torch.profiler run).

    . .venv/bin/activate && python scripts/capture_flashinfer_flashmla_fixtures.py [--out fixtures]

Registers stand-in custom ops with torch.library (through scripts/stand_in_library.py) under
the exact names and positional argument order the profiler records (see
perfreport/models/attention/flashinfer_prefill.py and attention_flashmla.py for the sources):

* FlashInfer v0.2.1 – v0.3.x FA2 JIT modules, ``<uri>::ragged_run`` and ``<uri>::paged_run``
  (``csrc/batch_prefill_jit_pybind.cu`` order with the FA2 ``ADDITIONAL_FUNC_PARAMS`` of
  ``jit/attention/pytorch.py`` ``gen_batch_prefill_module``);
* vLLM's FlashMLA ``_flashmla_C::fwd_kvcache_mla`` (vllm-project/FlashMLA ``csrc/torch_api.cpp``)
  and ``_flashmla_extension_C::fwd_kvcache_mla_fp8`` (``csrc/extension/torch_api.cpp``).

Each stand-in computes a small real attention in torch (scripts/stand_in_attention.py, per
request; causal bottom-right), inside a vLLM detailed iteration annotation whose statistics
match its shapes. Calls, in trace order (H_Q 8, H_KV 2, head dim 64, BF16 queries unless noted):

1. ``ragged_run`` over the new tokens only (SGLang's extend pass), causal: 2 prefill requests,
   a chunk of 24 new tokens on 40 cached (sk 64) and 8 new (sk 8) -> PREFILL below;
2. ``paged_run``, non-causal, over the cached prefix of the same step (SGLang's second pass),
   float8_e4m3fn NHD pages of 16 ``[blocks, 16, 2, 64]``;
3. ``paged_run``, causal, window_left 15 (W 16), every key of the same step from the FP8
   pages (a vLLM sliding-window layer);
4. ``_flashmla_C::fwd_kvcache_mla``: 4 decode requests with KV 37, 64, 100, 130, H_Q 16, one
   latent head of 576 (512 + 64 rope), head_size_v 512, BF16 pages of 64 ``[8, 64, 1, 576]``;
5. the same op with ``is_fp8`` and "FP8 with scale" pages ``[8, 64, 1, 656]`` uint8;
6. ``_flashmla_extension_C::fwd_kvcache_mla_fp8``: float8_e4m3fn q and cache, descale_q/k.

Seeded and re-runnable (only timestamps differ between runs); output
``fixtures/flashinfer_flashmla_ops.json.gz``.
"""

from __future__ import annotations

import sys
from pathlib import Path

from fixture_io import capture_cpu, fixture_main  # scripts/ is on sys.path when a script runs
from stand_in_attention import DECODE, DECODE_KV, attend
from stand_in_library import define

import torch

H_Q, H_KV, D, PAGE, MLA_PAGE = 8, 2, 64, 16, 64
MLA_HQ, MLA_DQK, MLA_DV = 16, 576, 512
PREFILL = "execute_32_context_2(sq32sk72sqsq640sqsk1600)_generation_0(sq0sk0sqsq0sqsk0)"
NEW, KV = [24, 8], [64, 8]
URI = (
    "batch_prefill_with_kv_cache_dtype_q_bf16_dtype_kv_{kv}_dtype_o_bf16_dtype_idx_i32_"
    "head_dim_qk_64_head_dim_vo_64_posenc_0_use_swa_{swa}_use_logits_cap_False_f16qk_False"
)
RAGGED = URI.format(kv="bf16", swa=False)
PAGED = URI.format(kv="e4m3", swa=False)
PAGED_SWA = URI.format(kv="e4m3", swa=True)
_TAIL = (
    "int mask_mode_code, int layout, int window_left, bool enable_pdl, "
    "Tensor? maybe_custom_mask, Tensor? maybe_mask_indptr, Tensor? maybe_alibi_slopes, "
    "Tensor? maybe_prefix_len_ptr, Tensor? maybe_token_pos_in_items_ptr, "
    "Tensor? maybe_max_item_len_ptr, float logits_soft_cap, float sm_scale, "
    "float rope_rcp_scale, float rope_rcp_theta, int token_pos_in_items_len) -> ()"
)


def _masked(q, k, v, scale, causal, window):
    """``attend`` with a non-causal or a sliding-window (W = window keys) variant."""
    if causal and window is None:
        return attend(q, k, v, scale)
    g = q.shape[1] // k.shape[1]
    qf, kf, vf = (t.float().repeat_interleave(r, 1).transpose(0, 1) for t, r in ((q, 1), (k, g), (v, g)))
    s = torch.matmul(qf, kf.transpose(1, 2)) * scale
    sq, n = q.shape[0], k.shape[0]
    pos = n - sq + torch.arange(sq)[:, None]
    mask = torch.zeros(sq, n, dtype=torch.bool)
    if causal:
        mask |= torch.arange(n)[None, :] > pos
    if window is not None:
        mask |= torch.arange(n)[None, :] <= pos - window
    return torch.matmul(torch.softmax(s.masked_fill(mask, float("-inf")), -1), vf).transpose(0, 1)


def ragged_run(
    float_workspace_buffer,
    int_workspace_buffer,
    plan_info_vec,
    q,
    k,
    v,
    qo_indptr,
    kv_indptr,
    o,
    maybe_lse,
    mask_mode_code,
    layout,
    window_left,
    enable_pdl,
    *rest,
):
    sm_scale = rest[7]
    cq, ck = qo_indptr.tolist(), kv_indptr.tolist()
    for i in range(len(cq) - 1):
        o[cq[i] : cq[i + 1]] = _masked(
            q[cq[i] : cq[i + 1]], k[ck[i] : ck[i + 1]], v[ck[i] : ck[i + 1]], sm_scale, mask_mode_code == 1, None
        ).to(o.dtype)


def paged_run(
    float_workspace_buffer,
    int_workspace_buffer,
    plan_info_vec,
    q,
    paged_k_cache,
    paged_v_cache,
    qo_indptr,
    paged_kv_indptr,
    paged_kv_indices,
    paged_kv_last_page_len,
    o,
    maybe_lse,
    mask_mode_code,
    layout,
    window_left,
    enable_pdl,
    *rest,
):
    sm_scale, page = rest[7], paged_k_cache.shape[1]
    cq, ind = qo_indptr.tolist(), paged_kv_indptr.tolist()
    for i in range(len(cq) - 1):
        pages = paged_kv_indices[ind[i] : ind[i + 1]].long()
        if len(pages) == 0:  # no cached keys for this request
            o[cq[i] : cq[i + 1]] = 0
            continue
        n = (len(pages) - 1) * page + int(paged_kv_last_page_len[i])
        k = paged_k_cache[pages].flatten(0, 1)[:n].float()
        v = paged_v_cache[pages].flatten(0, 1)[:n].float()
        w = window_left + 1 if window_left >= 0 else None
        o[cq[i] : cq[i + 1]] = _masked(q[cq[i] : cq[i + 1]], k, v, sm_scale, mask_mode_code == 1, w).to(o.dtype)


def _latent(kcache, row):
    """One page-table row of a latent cache -> [tokens, 1, 576] float (656-byte FP8 rows:
    512 float8_e4m3 values, 4 float32 scales per 128, 64 BF16 rope values)."""
    if kcache.shape[-1] == MLA_DQK:
        return kcache[row].flatten(0, 1).float()
    b = kcache[row].flatten(0, 1).contiguous()  # [tokens, 1, 656] uint8
    nope = b[..., :512].view(torch.float8_e4m3fn).float()
    scale = b[..., 512:528].contiguous().view(torch.float32)
    rope = b[..., 528:].contiguous().view(torch.bfloat16).float()
    return torch.cat([nope * scale.repeat_interleave(128, -1), rope], -1)


def _mla(q, kcache, head_size_v, seqlens_k, block_table, softmax_scale):
    out = torch.empty(*q.shape[:3], head_size_v, dtype=torch.bfloat16)
    for i, n in enumerate(seqlens_k.tolist()):
        nb = (n + MLA_PAGE - 1) // MLA_PAGE
        lat = _latent(kcache, block_table[i, :nb].long())[:n]
        out[i] = attend(q[i].float(), lat, lat[..., :head_size_v], softmax_scale).to(out.dtype)
    lse = torch.zeros(q.shape[0], q.shape[2], q.shape[1], dtype=torch.float32)
    return [out, lse]


def fwd_kvcache_mla(
    q,
    kcache,
    head_size_v,
    seqlens_k,
    block_table,
    softmax_scale,
    is_causal,
    tile_scheduler_metadata,
    num_splits,
    is_fp8,
    indices,
):
    return _mla(q, kcache, head_size_v, seqlens_k, block_table, softmax_scale)


def fwd_kvcache_mla_fp8(
    q,
    kcache,
    head_size_v,
    seqlens_k,
    block_table,
    softmax_scale,
    is_causal,
    tile_scheduler_metadata,
    num_splits,
    descale_q,
    descale_k,
):
    qf = q.float() * descale_q.view(-1, 1, 1, 1)
    kf = kcache.float() * float(descale_k[0])
    return _mla(qf, kf, head_size_v, seqlens_k, block_table, softmax_scale)


def register_ops() -> None:
    for uri in (RAGGED,):
        define(
            uri,
            "ragged_run(Tensor(a!) float_workspace_buffer, "
            "Tensor(b!) int_workspace_buffer, "
            "Tensor plan_info_vec, Tensor q, Tensor k, Tensor v, Tensor qo_indptr, "
            f"Tensor kv_indptr, Tensor(c!) o, Tensor(d!)? maybe_lse, {_TAIL}",
            ragged_run,
        )
    for uri in (PAGED, PAGED_SWA):
        define(
            uri,
            "paged_run(Tensor(a!) float_workspace_buffer, "
            "Tensor(b!) int_workspace_buffer, "
            "Tensor plan_info_vec, Tensor q, Tensor paged_k_cache, Tensor paged_v_cache, "
            "Tensor qo_indptr, Tensor paged_kv_indptr, Tensor paged_kv_indices, "
            "Tensor paged_kv_last_page_len, Tensor(c!) o, Tensor(d!)? maybe_lse, "
            f"{_TAIL}",
            paged_run,
        )
    define(
        "_flashmla_C",
        "fwd_kvcache_mla(Tensor q, Tensor kcache, int head_size_v, "
        "Tensor seqlens_k, "
        "Tensor block_table, float softmax_scale, bool is_causal, "
        "Tensor tile_scheduler_metadata, Tensor num_splits, bool is_fp8, "
        "Tensor? indices) -> Tensor[]",
        fwd_kvcache_mla,
    )
    define(
        "_flashmla_extension_C",
        "fwd_kvcache_mla_fp8(Tensor q, Tensor kcache, "
        "int head_size_v, Tensor seqlens_k, "
        "Tensor block_table, float softmax_scale, bool is_causal, "
        "Tensor tile_scheduler_metadata, Tensor num_splits, Tensor? descale_q, "
        "Tensor? descale_k) -> Tensor[]",
        fwd_kvcache_mla_fp8,
    )


def _pages(lens, page, gen, num_blocks):
    counts = [(n + page - 1) // page for n in lens]
    # last_page_len of a request without pages is 0
    perm = torch.randperm(num_blocks, generator=gen)[: sum(counts)].to(torch.int32)
    indptr = [0]
    for c in counts:
        indptr.append(indptr[-1] + c)
    last = [n - (c - 1) * page if c else 0 for n, c in zip(lens, counts)]
    return perm, torch.tensor(indptr, dtype=torch.int32), torch.tensor(last, dtype=torch.int32)


def _fp8_rows(lat):
    """[..., 576] float latents -> [..., 656] uint8 "FP8 with scale" rows."""
    nope, rope = lat[..., :512], lat[..., 512:]
    scale = nope.abs().unflatten(-1, (4, 128)).amax(-1).clamp_min(1e-6) / 448.0
    q8 = (nope / scale.repeat_interleave(128, -1)).to(torch.float8_e4m3fn).view(torch.uint8)
    return torch.cat(
        [q8, scale.contiguous().view(torch.uint8), rope.to(torch.bfloat16).contiguous().view(torch.uint8)], -1
    )


def _run(gen) -> None:
    bf, i32 = torch.bfloat16, (lambda x: torch.tensor(x, dtype=torch.int32))
    rnd = lambda *s: torch.randn(*s, generator=gen) * 0.5
    ws, plan, scale = torch.empty(64, dtype=torch.uint8), torch.zeros(8, dtype=torch.long), D**-0.5
    tail = [None] * 6 + [0.0, scale, 1.0, 1e-4, 0]
    q = rnd(32, H_Q, D).to(bf)
    cache = [rnd(12, PAGE, H_KV, D).to(torch.float8_e4m3fn) for _ in range(2)]
    o = torch.empty(32, H_Q, D, dtype=bf)
    with torch.profiler.record_function(PREFILL):
        k, v = rnd(32, H_KV, D).to(bf), rnd(32, H_KV, D).to(bf)
        getattr(torch.ops, RAGGED).ragged_run(
            ws, ws, plan, q, k, v, i32([0, 24, 32]), i32([0, 24, 32]), o, None, 1, 0, -1, False, *tail
        )
        # prefix pass: request 1's 40 cached tokens (3 pages), request 2 has none
        pre, pre_ptr, pre_last = _pages([40, 0], PAGE, gen, 12)
        getattr(torch.ops, PAGED).paged_run(
            ws, ws, plan, q, *cache, i32([0, 24, 32]), pre_ptr, pre, pre_last, o, None, 0, 0, -1, False, *tail
        )
        full, ptr, last = _pages(KV, PAGE, gen, 12)
        getattr(torch.ops, PAGED_SWA).paged_run(
            ws, ws, plan, q, *cache, i32([0, 24, 32]), ptr, full, last, o, None, 1, 0, 15, False, *tail
        )
    lat = rnd(8, MLA_PAGE, 1, MLA_DQK)
    perm, bt = torch.randperm(8, generator=gen).to(torch.int32), torch.zeros(4, 3, dtype=torch.int32)
    at = 0
    for i, n in enumerate(DECODE_KV):  # 1, 1, 2, 3 pages of 64
        nb = (n + MLA_PAGE - 1) // MLA_PAGE
        bt[i, :nb], at = perm[at : at + nb], at + nb
    meta, splits = torch.zeros(2, 8, dtype=torch.int32), torch.zeros(5, dtype=torch.int32)
    seqlens, mq = i32(DECODE_KV), rnd(4, 1, MLA_HQ, MLA_DQK)
    mla = torch.ops._flashmla_C.fwd_kvcache_mla
    with torch.profiler.record_function(DECODE):
        out = mla(mq.to(bf), lat.to(bf), MLA_DV, seqlens, bt, MLA_DQK**-0.5, False, meta, splits, False, None)
    with torch.profiler.record_function(DECODE):
        out8 = mla(mq.to(bf), _fp8_rows(lat), MLA_DV, seqlens, bt, MLA_DQK**-0.5, False, meta, splits, True, None)
    one = torch.ones(4)
    with torch.profiler.record_function(DECODE):
        dense = torch.ops._flashmla_extension_C.fwd_kvcache_mla_fp8(
            mq.to(torch.float8_e4m3fn),
            lat.to(torch.float8_e4m3fn),
            MLA_DV,
            seqlens,
            bt,
            MLA_DQK**-0.5,
            False,
            meta,
            splits,
            one,
            one,
        )
    for t in (o, out[0], out8[0], dense[0]):
        if not torch.isfinite(t.float()).all():
            raise SystemExit("stand-in attention produced non-finite output")
    if (out8[0].float() - out[0].float()).abs().max() > 0.1:
        raise SystemExit("FP8-with-scale stand-in disagrees with the BF16 latent cache")


def capture(path: Path) -> int:
    register_ops()
    gen = torch.Generator().manual_seed(2468)
    return capture_cpu(path, Path(__file__).name, lambda: _run(gen))


def main(argv=None) -> int:
    return fixture_main(argv, __doc__, "flashinfer_flashmla_ops.json.gz", capture)


if __name__ == "__main__":
    sys.exit(main())
