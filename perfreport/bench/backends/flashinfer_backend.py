"""``flashinfer``: FlashInfer's paged prefill wrapper (causal, q_len tokens per request), NHD.

UNVERIFIED here: written without FlashInfer or a GPU at hand. Planning (``plan``) happens once in
``prepare``; the timed closure is ``run`` only. Dk != Dv uses ``head_dim_vo`` (recent releases).
"""
from __future__ import annotations

import torch

from perfreport.bench.backends import Prepared, Skip, empty_output, nhd_caches, require

PACKAGE = "flashinfer-python"


def prepare(inputs, case, opts) -> Prepared:
    fi = require("flashinfer", PACKAGE)
    if not opts.get("on_gpu") or torch.version.hip:
        raise Skip("flashinfer needs an NVIDIA GPU")
    k, v = nhd_caches(inputs)
    dev = inputs.query.device
    s, q, page = case.batch, case.q_len, case.page
    pages = case.pages_per_seq
    qo_indptr = torch.arange(0, s + 1, dtype=torch.int32, device=dev) * q
    kv_indptr = torch.arange(0, s + 1, dtype=torch.int32, device=dev) * pages
    kv_indices = inputs.block_tables[:, :pages].reshape(-1).contiguous()
    last = torch.full((s,), case.context - (pages - 1) * page, dtype=torch.int32, device=dev)
    ws = torch.empty(256 * 2 ** 20, dtype=torch.uint8, device=dev)
    wrapper = fi.BatchPrefillWithPagedKVCacheWrapper(ws, "NHD")
    kw = dict(causal=True, q_data_type=torch.bfloat16, kv_data_type=k.dtype)
    if case.head_dim != case.v_head_dim:
        kw["head_dim_vo"] = case.v_head_dim
    try:
        wrapper.plan(qo_indptr, kv_indptr, kv_indices, last, case.q_heads, case.kv_heads,
                     case.head_dim, page, **kw)
    except TypeError as exc:
        raise Skip(f"this flashinfer cannot plan the case: {exc}") from None
    ks = float(inputs.k_scale) if inputs.k_scale is not None else None  # host read, outside timing
    vs = float(inputs.v_scale) if inputs.v_scale is not None else None
    out = empty_output(inputs, case)

    def run():
        wrapper.run(inputs.query, (k, v), k_scale=ks, v_scale=vs, out=out)
        return out

    return Prepared(run=run, out=out, note="unverified adapter")
