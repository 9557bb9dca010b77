"""``aiter``: AMD's ``aiter.paged_attention_v1`` (ROCm only).

Positional signature (from aiter's ops/attention.py): (out, workspace_buffer, query, key_cache,
value_cache, scale, block_tables, cu_query_lens, context_lens, max_context_len, alibi_slopes,
kv_cache_dtype, kv_cache_layout, logits_soft_cap, k_scale, v_scale, fp8_out_scale,
partition_size, mtp). Caches are given in NHD (5D converted once). UNVERIFIED here: written
without aiter or an AMD GPU at hand; the workspace size is a generous estimate and the MTP
(q_len > 1) mapping is our reading of the API. Its output is checked against the reference
like every backend, so a wrong mapping shows as a failed row, not a wrong timing.
"""

from __future__ import annotations

import torch

from perfreport.pa.bench.backends import Prepared, Skip, SkipRow, empty_output, nhd_caches, query_start_loc, require

PACKAGE = "aiter"
PARTITION = 256


def prepare(inputs, case, opts) -> Prepared:
    aiter = require("aiter", PACKAGE)
    if not opts.get("on_gpu") or not torch.version.hip:
        raise Skip("aiter runs on AMD GPUs only (ROCm build of torch)")
    fn = getattr(aiter, "paged_attention_v1", None)
    if fn is None:
        raise Skip("this aiter has no paged_attention_v1")
    if case.head_dim != case.v_head_dim:
        raise SkipRow("aiter paged_attention_v1 needs Dk == Dv")
    k, v = nhd_caches(inputs)
    dev = inputs.query.device
    out = empty_output(inputs, case)
    parts = -(-case.context // PARTITION)
    rows, hq = out.shape[0], out.shape[1]
    ws = torch.empty(rows * hq * parts * (case.v_head_dim + 2) * 4, dtype=torch.uint8, device=dev)
    cu_q = query_start_loc(case, dev)
    one = torch.ones(1, dtype=torch.float32, device=dev)
    ks = inputs.k_scale if inputs.k_scale is not None else one
    vs = inputs.v_scale if inputs.v_scale is not None else one
    kv_dtype = "fp8" if case.kv_dtype == "fp8" else "auto"

    def run():
        fn(
            out,
            ws,
            inputs.query,
            k,
            v,
            inputs.scale,
            inputs.block_tables,
            cu_q,
            inputs.context_lens,
            case.context,
            None,
            kv_dtype,
            "NHD",
            0.0,
            ks,
            vs,
            None,
            PARTITION,
            case.q_len,
        )
        return out

    return Prepared(run=run, out=out, partitions=str(parts), note="unverified adapter")
