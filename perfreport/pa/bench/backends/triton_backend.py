"""``triton``: our kernel (perfreport.pa.kernel.partition_kernel), NHD or 5D caches as given.

On a machine without a GPU it runs through the Triton interpreter; bench-pa sets
TRITON_INTERPRET=1 before triton is first imported in that case.
"""

from __future__ import annotations

import os

import torch

from perfreport.pa.bench.backends import Prepared, Skip, SkipRow, require

MAX_ROWS = 256  # q_len * H_Q / H_KV query rows per KV head: the kernel holds them in one tile

PACKAGE = "triton"


def prepare(inputs, case, opts) -> Prepared:
    # the interpreter check before triton is imported: triton reads TRITON_INTERPRET once, when it
    # is first imported, so importing it here with the variable unset left every later Triton run
    # of the process failing ("Cannot call @triton.jit'd outside of the scope of a kernel")
    if not opts.get("on_gpu") and os.environ.get("TRITON_INTERPRET") != "1":
        raise Skip("no GPU and TRITON_INTERPRET is not 1")
    require("triton", PACKAGE)
    from perfreport.pa.kernel.host import decode_partitions, make_workspace, paged_attention_decode

    dev = inputs.query.device
    s, hq, hkv = case.batch, case.q_heads, case.kv_heads
    if case.q_len * (hq // hkv) > MAX_ROWS:
        raise SkipRow(
            f"q_len x H_Q/H_KV = {case.q_len * (hq // hkv)} query rows per KV head; "
            f"the kernel's tile holds at most {MAX_ROWS}"
        )
    fp8_mma, partials = opts.get("fp8_mma", "f16"), opts.get("partials", "fp32")
    args = (inputs.query, inputs.key_cache, inputs.value_cache, inputs.block_tables, inputs.context_lens)
    kw = dict(
        scale=inputs.scale,
        k_scale=inputs.k_scale,
        v_scale=inputs.v_scale,
        q_len=case.q_len,
        layout=case.kernel_layout,
        max_context=case.context,
        min_context=case.context,
        fp8_dtype=inputs.fp8_dtype,
        fp8_mma=fp8_mma,
        partials=partials,
    )
    parts = opts.get("partitions", "auto")
    if parts == "auto":  # from the compiled kernel's CTAs per SM (one planning compile)
        parts = decode_partitions(*args, **kw)
    out = torch.empty(s * case.q_len, hq, case.v_head_dim, dtype=torch.bfloat16, device=dev)
    ws = None
    if parts > 1:  # caller-owned workspace: the launch allocates nothing (graph-capturable)
        ws = make_workspace(s, hkv, case.q_len * (hq // hkv), case.v_head_dim, parts, dev, partials)

    def run():
        return paged_attention_decode(*args, num_partitions=parts, workspace=ws, out=out, **kw)

    note = f"FP8 MMAs ({fp8_mma})" if case.kv_dtype == "fp8" and fp8_mma == "fp8" else ""
    return Prepared(run=run, out=out, partitions=str(parts), note=note)
