"""``torch``: the gather-then-attend reference (fp32), the default baseline; runs on CPU too."""

from __future__ import annotations

from perfreport.pa.bench.backends import Prepared, empty_output, nhd_caches
from perfreport.pa.kernel.reference import paged_attention_ref

PACKAGE = "torch"


def prepare(inputs, case, opts) -> Prepared:
    k, v = nhd_caches(inputs)  # the reference reads NHD; convert 5D once, outside the timing
    out = empty_output(inputs, case)

    def run():
        out.copy_(
            paged_attention_ref(
                inputs.query,
                k,
                v,
                inputs.block_tables,
                inputs.context_lens,
                scale=inputs.scale,
                k_scale=inputs.k_scale,
                v_scale=inputs.v_scale,
                q_len=inputs.q_len,
                layout="NHD",
                fp8_dtype=inputs.fp8_dtype,
            )
        )
        return out

    return Prepared(run=run, out=out, partitions="")
