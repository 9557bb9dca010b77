"""Max error of the two FP8 paths of the paged-attention kernel against a float64 reference.

    PYTHONPATH=. python benchmarks/pa_fp8_error.py

Runs the kernel through the Triton interpreter on the CPU (TRITON_INTERPRET=1: operands are
rounded to the GPU operand dtypes, see docs/bench-pa.md) at 16:1 GQA, q_len 4, FP8 KV with
per-tensor scales, N(0, 1) data, 2 partitions, and prints one row per (shape, path).
"""

import os

os.environ["TRITON_INTERPRET"] = "1"

import torch  # noqa: E402

from perfreport.pa.kernel.host import paged_attention_decode  # noqa: E402
from perfreport.pa.kernel.reference import paged_attention_ref  # noqa: E402
from perfreport.pa.kernel.cache import build_inputs  # noqa: E402

SHAPES = [(64, 32, 16, [300, 77]), (192, 128, 64, [1000, 517])]


def main():
    print(f"{'Dk/Dv':>8} {'page':>5} {'contexts':>12} {'path':>5} {'max err':>9} {'max|ref|':>9} {'rel':>7}")
    for dk, dv, page, ctx in SHAPES:
        inp = build_inputs(
            ctx, q_len=4, q_heads=16, kv_heads=1, head_dim=dk, v_head_dim=dv, page_size=page, kv_dtype="fp8", seed=9
        )
        ref = paged_attention_ref(
            inp.query,
            inp.key_cache,
            inp.value_cache,
            inp.block_tables,
            inp.context_lens,
            fp8_dtype=inp.fp8_dtype,
            out_dtype=None,
            compute_dtype=torch.float64,
            **inp.kwargs(),
        )
        top = ref.abs().max().item()
        for mma in ("f16", "fp8"):
            out = paged_attention_decode(
                inp.query,
                inp.key_cache,
                inp.value_cache,
                inp.block_tables,
                inp.context_lens,
                num_partitions=2,
                fp8_mma=mma,
                **inp.kwargs(),
            )
            err = (out.double() - ref).abs().max().item()
            print(f"{dk:>4}/{dv:<3} {page:>5} {str(ctx):>12} {mma:>5} {err:>9.5f} {top:>9.4f} {err / top:>7.2%}")


if __name__ == "__main__":
    main()
