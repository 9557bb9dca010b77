"""Sweep of the paged-attention kernel's knobs at one shape on a GPU; one CSV row per config.

    python scripts/pa_sweep.py OUT.csv [--context 65536] [--budget-s 120] [--reps 30]

Paths: BF16 KV, FP8 KV via f16, FP8 MMAs. Configs in priority order, every path at each level
before the next level, so a run stopped by its budget has measured FP8 and deeper pipelines
first: (1) each path's default (block_n, num_stages) for this target (perfreport/pa/kernel/
tuning.py) with the planner's partitions; (2) num_stages 2..5 at the default block_n; (3) the
other block_n; (4) bf16 partials; (5) half and double the partitions. Each row is written (and
flushed) as soon as it is measured; a config that does not compile or launch is a row with its
error. Seed shape: batch 32, q_len 4, 16:1 GQA, Dk 192, Dv 128, page 64. Cold-cache timing as
bench-pa; correctness by bench-pa's check (perfreport/pa/bench/check.py) on a NaN-filled output.
"""

from __future__ import annotations

import argparse
import csv
import sys
import time

PATHS = (("bf16", "f16"), ("fp8", "f16"), ("fp8", "fp8"))
COLS = ["kv_dtype", "fp8_mma", "num_stages", "block_n", "partials", "partitions", "median_us", "p10_us", "p90_us"]
COLS += ["kv_tb_s", "rel_l2", "rel_max", "status"]


def configs(target: str, auto: dict) -> list[tuple]:
    """(kv, mma, stages, block_n, partials, partitions) in priority order (module docstring)."""
    from perfreport.pa.kernel.tuning import default_config

    levels: list[list[tuple]] = [[], [], [], [], []]
    for kv, mma in PATHS:
        bn, st = default_config(target, kv, "bf16" if kv == "bf16" else mma)
        p = auto[kv, mma]
        levels[0].append((kv, mma, st, bn, "fp32", p))
        levels[1] += [(kv, mma, s, bn, "fp32", p) for s in (2, 3, 4, 5) if s != st]
        levels[2].append((kv, mma, st, 96 - bn if bn in (32, 64) else 32, "fp32", p))
        levels[3].append((kv, mma, st, bn, "bf16", p))
        levels[4] += [(kv, mma, st, bn, "fp32", q) for q in sorted({max(1, p // 2), 2 * p}) if q != p]
    out, seen = [], set()
    for lvl in levels:
        for c in sorted(lvl, key=lambda c: PATHS.index(c[:2])):
            if c not in seen:
                seen.add(c)
                out.append(c)
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--context", type=int, default=65536)
    ap.add_argument("--budget-s", type=float, default=120.0)
    ap.add_argument("--reps", type=int, default=30)
    a = ap.parse_args(argv)

    import torch

    from perfreport.pa.bench.check import check, path_of, poison
    from perfreport.pa.bench.timing import llc_bytes, time_gpu
    from perfreport.pa.kernel.cache import build_inputs
    from perfreport.pa.kernel.host import decode_partitions, make_workspace, paged_attention_decode
    from perfreport.pa.kernel.reference import paged_attention_ref
    from perfreport.pa.kernel.tuning import device_target

    t_end = time.time() + a.budget_s
    flush = 2 * llc_bytes()
    s, q, hq, dk, dv, page = 32, 4, 16, 192, 128, 64
    dev = torch.device("cuda")
    inputs, refs, auto = {}, {}, {}
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
            device=dev,
        )
        args = (inp.query, inp.key_cache, inp.value_cache, inp.block_tables, inp.context_lens)
        inputs[kv] = (inp, args)
        refs[kv] = paged_attention_ref(*args, fp8_dtype=inp.fp8_dtype, out_dtype=None, **inp.kwargs())
        for k2, mma in PATHS:
            if k2 == kv:
                auto[kv, mma] = decode_partitions(*args, fp8_mma=mma, max_context=a.context, **inp.kwargs())
    with open(a.out, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(COLS)
        f.flush()
        for kv, mma, stages, bn, partials, parts in configs(device_target(dev), auto):
            if time.time() > t_end:
                print("sweep: time budget spent", flush=True)
                return 0
            inp, args = inputs[kv]
            ws = make_workspace(s, 1, q * hq, dv, parts, dev, partials) if parts > 1 else None
            out = torch.empty(s * q, hq, dv, dtype=torch.bfloat16, device=dev)
            kw = dict(num_partitions=parts, workspace=ws, out=out, max_context=a.context, min_context=a.context)
            kw.update(fp8_mma=mma, partials=partials, num_stages=stages, block_n=bn, **inp.kwargs())

            def fn():
                return paged_attention_decode(*args, **kw)

            row = [kv, mma, stages, bn, partials, parts]
            try:
                poison(out)
                fn()
                torch.cuda.synchronize()
                c = check(out, refs[kv], path_of(kv, mma))
                t = time_gpu(fn, a.reps, flush_bytes=flush)
                kv_total = s * a.context * (dk + dv) * (2 if kv == "bf16" else 1)
                row += [f"{t.median_us:.1f}", f"{t.p10_us:.1f}", f"{t.p90_us:.1f}"]
                row += [f"{kv_total / (t.median_us * 1e-6) / 1e12:.3f}", f"{c.rel_l2:.3g}", f"{c.rel_max:.3g}"]
                row.append("ok" if c.ok else f"FAIL: {c.why}")
            except Exception as exc:  # a config that does not compile or launch: recorded, go on
                row += ["", "", "", "", "", "", f"error: {type(exc).__name__}: {str(exc)[:120]}"]
            w.writerow(row)
            f.flush()
            print(",".join(map(str, row)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
