"""``vllm``: vLLM's Triton ``unified_attention`` over NHD paged caches (CUDA and ROCm).

UNVERIFIED here: written without vLLM or a GPU at hand; the module path moved between vLLM
releases, so several are tried. vLLM's kernel uses one head size for K and V (Dk == Dv).
Its programs each handle one query token of one sequence (``unified_attention`` is written for
mixed prefill/decode batches), so at q_len > 1 the row is labelled "one token per program": the
KV pages are read once per new token, not once per sequence as in our kernel.
"""

from __future__ import annotations

import importlib

from perfreport.pa.bench.backends import Prepared, Skip, SkipRow, empty_output, nhd_caches, query_start_loc, require

PACKAGE = "vllm"
_MODULES = ("vllm.attention.ops.triton_unified_attention", "vllm.v1.attention.ops.triton_unified_attention")


def prepare(inputs, case, opts) -> Prepared:
    require("vllm", PACKAGE)
    if not opts.get("on_gpu"):
        raise Skip("vllm kernels need a GPU")
    fn = None
    for m in _MODULES:
        try:
            fn = getattr(importlib.import_module(m), "unified_attention", None)
        except Exception:
            continue
        if fn is not None:
            break
    if fn is None:
        raise Skip("vllm is installed but triton_unified_attention.unified_attention was not found")
    if case.head_dim != case.v_head_dim:
        raise SkipRow("vllm unified_attention needs Dk == Dv")
    k, v = nhd_caches(inputs)
    dev = inputs.query.device
    out = empty_output(inputs, case)
    cu_q = query_start_loc(case, dev)
    ks = inputs.k_scale.expand(case.batch, case.kv_heads) if inputs.k_scale is not None else None
    vs = inputs.v_scale.expand(case.batch, case.kv_heads) if inputs.v_scale is not None else None

    def run():
        fn(
            q=inputs.query,
            k=k,
            v=v,
            out=out,
            cu_seqlens_q=cu_q,
            max_seqlen_q=case.q_len,
            seqused_k=inputs.context_lens,
            max_seqlen_k=case.context,
            softmax_scale=inputs.scale,
            causal=True,
            window_size=(-1, -1),
            block_table=inputs.block_tables,
            softcap=0,
            q_descale=None,
            k_descale=ks,
            v_descale=vs,
        )
        return out

    note = "unverified adapter"
    if case.q_len > 1:
        note += f"; one token per program (KV read {case.q_len}x)"
    return Prepared(run=run, out=out, note=note)
