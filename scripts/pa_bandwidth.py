"""Measured HBM bandwidth of this GPU: read-only and copy, the ceiling bench-pa's table uses.

    python scripts/pa_bandwidth.py OUT.json [--gb 4]

Read-only: ``x.sum()`` over a 4 GB fp32 buffer (reads 4 GB, writes 4 bytes). Copy: 2 GB into
another 2 GB buffer (``y.copy_(x)``, 4 GB moved: read + write). CUDA events around each of 20
launches after a warm-up; the median and the best are kept (the buffers are far larger than the
L2, so every rep reads from HBM). Writes ``{"read_tb_s", "read_best_tb_s", "copy_tb_s",
"copy_best_tb_s", "bytes"}`` and prints one line per probe.
"""

from __future__ import annotations

import argparse
import json
import sys


def _time(fn, reps: int):
    import torch

    fn()
    torch.cuda.synchronize()
    ts = []
    for _ in range(reps):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        fn()
        e.record()
        torch.cuda.synchronize()
        ts.append(s.elapsed_time(e) / 1e3)
    ts.sort()
    return ts[len(ts) // 2], ts[0]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--gb", type=float, default=4.0)
    ap.add_argument("--reps", type=int, default=20)
    a = ap.parse_args(argv)
    import torch

    n = int(a.gb * 1e9) // 4
    x = torch.ones(n, dtype=torch.float32, device="cuda")
    nbytes = n * 4
    med, best = _time(lambda: x.sum(), a.reps)
    res = dict(bytes=nbytes, read_tb_s=nbytes / med / 1e12, read_best_tb_s=nbytes / best / 1e12)
    print(f"read-only sum {nbytes / 1e9:.1f} GB: median {med * 1e3:.3f} ms -> {res['read_tb_s']:.3f} TB/s")
    half = x[: n // 2]
    y = torch.empty_like(half)
    med, best = _time(lambda: y.copy_(half), a.reps)
    res.update(copy_tb_s=nbytes / med / 1e12, copy_best_tb_s=nbytes / best / 1e12)
    print(
        f"copy {nbytes / 2e9:.1f} GB -> {nbytes / 2e9:.1f} GB: median {med * 1e3:.3f} ms -> {res['copy_tb_s']:.3f} TB/s moved"
    )
    with open(a.out, "w") as f:
        json.dump(res, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
