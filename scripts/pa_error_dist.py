"""Error distribution of each kernel path against a float64 reference (sets bench-pa's thresholds).

    PYTHONPATH=. python scripts/pa_error_dist.py [--seeds 3] [--quick | --shapes 0,2]

Runs the Triton kernel through the interpreter on the CPU (TRITON_INTERPRET=1; the MMA operands
are rounded to the GPU operand dtypes first, see docs/bench-pa.md) at q_len 4 and 16:1 GQA, for
every path (BF16 KV; FP8 KV dequantized to f16; FP8 MMAs) and, on FP8, every pair of K and V
scale kinds (tensor, head, token) plus per-token V scales above 1 (V values N(0, 1000^2)).
Each run's two errors (:mod:`perfreport.pa.bench.check`: rel L2 and max error over max|ref|)
against the float64 reference go into one line; the summary per path gives the median and the
maximum of each, the figures docs/bench-pa.md's "Correctness check" table holds.
"""

from __future__ import annotations

import argparse
import itertools
import os
import statistics
import sys

os.environ["TRITON_INTERPRET"] = "1"

SHAPES = [  # (Dk, Dv, page, contexts, partitions)
    (192, 128, 64, [1000, 517], 2),
    (192, 192, 64, [700, 300], 1),
    (64, 32, 16, [300, 77], 3),
]
QUICK = SHAPES[:1]
MODES = ("tensor", "head", "token")


def runs(seeds: int, shapes):
    """(path, label, kwargs for build_inputs, fp8_mma, partitions) of every measured run."""
    for (dk, dv, page, ctx, parts), seed in itertools.product(shapes, range(seeds)):
        base = dict(context_lens=ctx, head_dim=dk, v_head_dim=dv, page_size=page, seed=seed)
        yield "bf16", f"{dk}/{dv} p{page}", dict(base, kv_dtype="bf16"), "f16", parts
        for mma in ("f16", "fp8"):
            for km, vm in itertools.product(MODES, MODES):
                kw = dict(base, kv_dtype="fp8", scale_mode=km, v_scale_mode=vm)
                yield f"fp8-{mma}", f"{dk}/{dv} p{page} K {km} V {vm}", kw, mma, parts
            kw = dict(base, kv_dtype="fp8", scale_mode="head", v_scale_mode="token", v_gain=1000.0)
            yield f"fp8-{mma}", f"{dk}/{dv} p{page} K head V token x1000", kw, mma, parts


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="one shape only")
    ap.add_argument("--shapes", default="", help="comma list of indices into SHAPES (default: all)")
    a = ap.parse_args(argv)
    shapes = QUICK if a.quick else SHAPES
    if a.shapes:
        shapes = [SHAPES[int(i)] for i in a.shapes.split(",")]

    import torch

    from perfreport.pa.bench.check import errors
    from perfreport.pa.kernel.cache import build_inputs
    from perfreport.pa.kernel.host import paged_attention_decode
    from perfreport.pa.kernel.reference import paged_attention_ref

    dist: dict[str, list[tuple[float, float]]] = {}
    print(f"{'path':8} {'case':36} {'seed':>4} {'rel L2':>9} {'max/max|ref|':>12}")
    for path, label, kw, mma, parts in runs(a.seeds, shapes):
        inp = build_inputs(kw.pop("context_lens"), q_len=4, q_heads=16, kv_heads=1, **kw)
        args = (inp.query, inp.key_cache, inp.value_cache, inp.block_tables, inp.context_lens)
        ref = paged_attention_ref(
            *args, fp8_dtype=inp.fp8_dtype, out_dtype=None, compute_dtype=torch.float64, **inp.kwargs()
        )
        out = paged_attention_decode(*args, num_partitions=parts, fp8_mma=mma, **inp.kwargs())
        rel_l2, rel_max, _, _ = errors(out, ref)
        dist.setdefault(path, []).append((rel_l2, rel_max))
        print(f"{path:8} {label:36} {kw['seed']:>4} {rel_l2:>9.5f} {rel_max:>12.5f}", flush=True)
    print()
    print("| path | runs | rel L2 median | rel L2 max | max err / max\\|ref\\| median | max |")
    print("|---|---|---|---|---|---|")
    for path, v in dist.items():
        l2, mx = [x[0] for x in v], [x[1] for x in v]
        print(
            f"| {path} | {len(v)} | {statistics.median(l2):.4f} | {max(l2):.4f} | "
            f"{statistics.median(mx):.4f} | {max(mx):.4f} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
