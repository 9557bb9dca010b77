"""``flashinfer``: FlashInfer's paged decode wrapper at q_len 1, its paged prefill wrapper
(causal, q_len tokens per request) otherwise; NHD caches.

UNVERIFIED here: written without FlashInfer or a GPU at hand. Planning (``plan``) happens once in
``prepare``; the timed closure is ``run`` only. Dk != Dv uses the prefill wrapper's
``head_dim_vo`` (recent releases; the decode wrapper has one head dim). A ``plan`` that raises
becomes a skipped row with its message (see :mod:`perfreport.pa.bench.backends`).
"""

from __future__ import annotations

import torch

from perfreport.pa.bench.backends import Prepared, Skip, SkipRow, empty_output, nhd_caches, require

PACKAGE = "flashinfer-python"


def prepare(inputs, case, opts) -> Prepared:
    fi = require("flashinfer", PACKAGE)
    if not opts.get("on_gpu") or torch.version.hip:
        raise Skip("flashinfer needs an NVIDIA GPU")
    if any(t is not None and t.numel() > 1 for t in (inputs.k_scale, inputs.v_scale)):
        raise SkipRow("flashinfer takes one K and one V scale (per tensor)")
    k, v = nhd_caches(inputs)
    dev = inputs.query.device
    s, q, page = case.batch, case.q_len, case.page
    pages = case.pages_per_seq
    kv_indptr = torch.arange(0, s + 1, dtype=torch.int32, device=dev) * pages
    kv_indices = inputs.block_tables[:, :pages].reshape(-1).contiguous()
    last = torch.full((s,), case.context - (pages - 1) * page, dtype=torch.int32, device=dev)
    ws = torch.empty(256 * 2**20, dtype=torch.uint8, device=dev)
    kw = dict(q_data_type=torch.bfloat16, kv_data_type=k.dtype)
    decode = q == 1 and case.head_dim == case.v_head_dim
    if decode:
        wrapper = fi.BatchDecodeWithPagedKVCacheWrapper(ws, "NHD")
        wrapper.plan(kv_indptr, kv_indices, last, case.q_heads, case.kv_heads, case.head_dim, page, **kw)
    else:
        qo_indptr = torch.arange(0, s + 1, dtype=torch.int32, device=dev) * q
        wrapper = fi.BatchPrefillWithPagedKVCacheWrapper(ws, "NHD")
        if case.head_dim != case.v_head_dim:
            kw["head_dim_vo"] = case.v_head_dim
        wrapper.plan(
            qo_indptr, kv_indptr, kv_indices, last, case.q_heads, case.kv_heads, case.head_dim, page, causal=True, **kw
        )
    ks = float(inputs.k_scale) if inputs.k_scale is not None else None  # host read, outside timing
    vs = float(inputs.v_scale) if inputs.v_scale is not None else None
    out = empty_output(inputs, case)

    def run():
        wrapper.run(inputs.query, (k, v), k_scale=ks, v_scale=vs, out=out)
        return out

    return Prepared(
        run=run, out=out, note="unverified adapter; " + ("decode wrapper" if decode else "prefill wrapper (causal)")
    )
