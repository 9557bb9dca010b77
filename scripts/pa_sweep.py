"""Sweep of the paged-attention kernel's knobs at one shape on a GPU; one CSV row per config.

    python scripts/pa_sweep.py OUT.csv [--context 65536] [--budget-s 120]

Knobs: num_stages (2, 3, 4), block_n (32, 64), partials (fp32, bf16), partitions (the planner's,
half and double), and for FP8 the MMA path (f16, fp8). Each row is written (and flushed) as soon
as it is measured, so a run stopped by its time budget or a timeout keeps what it measured.
Seed shape: batch 32, q_len 4, 16:1 GQA, Dk 192, Dv 128, page 64. Cold-cache timing as bench-pa.
"""

from __future__ import annotations

import argparse
import csv
import itertools
import sys
import time


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--context", type=int, default=65536)
    ap.add_argument("--budget-s", type=float, default=120.0)
    ap.add_argument("--reps", type=int, default=50)
    a = ap.parse_args(argv)

    import torch

    from perfreport.pa.bench.timing import llc_bytes, time_gpu
    from perfreport.pa.kernel.host import auto_partitions, make_workspace, paged_attention_decode
    from perfreport.pa.kernel.reference import paged_attention_ref
    from perfreport.pa.kernel.cache import build_inputs

    t_end = time.time() + a.budget_s
    flush = 2 * llc_bytes()
    s, q, hq, dk, dv, page = 32, 4, 16, 192, 128, 64
    kv_bytes = {"bf16": 2, "fp8": 1}
    cols = [
        "kv_dtype",
        "fp8_mma",
        "num_stages",
        "block_n",
        "partials",
        "partitions",
        "median_us",
        "p10_us",
        "p90_us",
        "kv_tb_s",
        "max_err",
        "status",
    ]
    with open(a.out, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(cols)
        f.flush()
        for kv in ("bf16", "fp8"):
            inp = build_inputs(
                [a.context] * s,
                q_len=q,
                q_heads=hq,
                kv_heads=1,
                head_dim=dk,
                v_head_dim=dv,
                page_size=page,
                kv_dtype=kv,
                device="cuda",
            )
            ref = paged_attention_ref(
                inp.query,
                inp.key_cache,
                inp.value_cache,
                inp.block_tables,
                inp.context_lens,
                fp8_dtype=inp.fp8_dtype,
                out_dtype=None,
                **inp.kwargs(),
            )
            tol = 4e-2 * max(1.0, float(ref.abs().max()))
            auto = auto_partitions(s, 1, a.context // page, page, torch.device("cuda"))
            mmas = ("f16", "fp8") if kv == "fp8" else ("f16",)
            grid = itertools.product(
                mmas, (3, 2, 4), (32, 64), ("fp32", "bf16"), sorted({auto, max(1, auto // 2), 2 * auto})
            )
            kv_total = s * a.context * (dk + dv) * kv_bytes[kv]
            for mma, stages, bn, partials, parts in grid:
                if time.time() > t_end:
                    print("sweep: time budget spent", flush=True)
                    return 0
                ws = make_workspace(s, 1, q * hq, dv, parts, "cuda", partials) if parts > 1 else None
                out = torch.empty(s * q, hq, dv, dtype=torch.bfloat16, device="cuda")

                def fn():
                    return paged_attention_decode(
                        inp.query,
                        inp.key_cache,
                        inp.value_cache,
                        inp.block_tables,
                        inp.context_lens,
                        num_partitions=parts,
                        workspace=ws,
                        out=out,
                        max_context=a.context,
                        min_context=a.context,
                        fp8_mma=mma,
                        partials=partials,
                        num_stages=stages,
                        block_n=bn,
                        **inp.kwargs(),
                    )

                row = [kv, mma, stages, bn, partials, parts]
                try:
                    fn()
                    torch.cuda.synchronize()
                    err = float((out.float() - ref).abs().max())
                    t = time_gpu(fn, a.reps, flush_bytes=flush)
                    row += [
                        f"{t.median_us:.1f}",
                        f"{t.p10_us:.1f}",
                        f"{t.p90_us:.1f}",
                        f"{kv_total / (t.median_us * 1e-6) / 1e12:.3f}",
                        f"{err:.3g}",
                        "ok" if err <= tol else "FAIL",
                    ]
                except Exception as exc:  # a config that does not compile or launch: recorded, go on
                    row += ["", "", "", "", "", f"error: {type(exc).__name__}: {str(exc)[:120]}"]
                w.writerow(row)
                f.flush()
                print(",".join(map(str, row)), flush=True)
            del inp, ref
    return 0


if __name__ == "__main__":
    sys.exit(main())
