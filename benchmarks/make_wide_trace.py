#!/usr/bin/env python3
"""Write a trace with many distinct ops or kernels, built from a real one.

    python benchmarks/make_wide_trace.py OUT.json --copies 6 --shapes 15000
    python benchmarks/make_wide_trace.py OUT.json --copies 14 --kernels 20000
    python benchmarks/make_wide_trace.py OUT.json --copies 1 --fraction 0.33   # a small trace (~3 MB)

``--copies`` back-to-back copies of ``--source`` (default fixtures/h100_qwen_0.5b.json.gz: 18k
events, 4,186 cpu_ops, 1,465 kernels, 26 distinct kernel names), timestamps shifted and every id
that links events offset (scripts/make_rank_traces.py's ``shift_event``), so kernels still link to
their launches. Then, as in traces of training with dynamic shapes or torch.compile:

* ``--shapes N``: the largest dimension of each cpu_op's ``Input Dims`` (its token count, or a
  width) grows by one of N offsets, a different one for each op call in turn, so ops_unique_args
  has up to N rows per op name (the FLOP and byte models see real, different, consistent shapes);
* ``--kernels N``: each kernel's name gets one of N suffixes in turn (``..._k123``), as Triton
  and template kernels are named per specialisation, so kernel_summary has up to N rows.
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
from make_rank_traces import shift_event  # noqa: E402


def _reshape(e: dict, off: int) -> None:
    """Grow the op's largest dimension (its token count for activations, a width for weights)
    by ``off`` wherever it occurs among its inputs, so its shapes stay consistent (a GEMM's
    shared dimension changes on both sides)."""
    a = e.get("args")
    dims = a.get("Input Dims") if isinstance(a, dict) else None
    if not isinstance(dims, list):
        return
    top = max((x for d in dims if isinstance(d, list) for x in d if isinstance(x, int)), default=0)
    if top > 1:
        a["Input Dims"] = [[x + off if x == top else x for x in d] if isinstance(d, list) else d for d in dims]


def build(source: Path, dst: Path, copies: int, shapes: int, kernels: int, fraction: float = 1.0) -> dict:
    doc = json.loads(gzip.open(source).read())
    events = doc.pop("traceEvents")
    ts = [e["ts"] for e in events if isinstance(e.get("ts"), (int, float))]
    if fraction < 1.0:  # the first part of the trace in time (and the events without a time)
        end = min(ts) + fraction * (max(ts) - min(ts))
        events = [e for e in events if not isinstance(e.get("ts"), (int, float)) or e["ts"] <= end]
        ts = [t for t in ts if t <= end]
    span = max(ts) - min(ts) + 1000.0
    n_op = n_k = n = 0
    with open(dst, "w") as f:
        f.write("{\n")
        for k, v in doc.items():
            f.write(f"  {json.dumps(k)}: {json.dumps(v)},\n")
        f.write('  "traceEvents": [\n')
        for c in range(copies):
            for e in events:
                e2 = shift_event(e, c * span, c * 10**7)
                cat = e2.get("cat")
                if shapes and cat == "cpu_op":
                    _reshape(e2, n_op % shapes)
                    n_op += 1
                elif kernels and cat == "kernel":
                    e2["name"] = f"{e2['name']}_k{n_k % kernels}"
                    n_k += 1
                f.write(("" if n == 0 else ",\n") + "    " + json.dumps(e2))
                n += 1
        f.write("\n  ]\n}\n")
    return {"events": n, "bytes": dst.stat().st_size}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out")
    ap.add_argument("--source", default=str(ROOT / "fixtures" / "h100_qwen_0.5b.json.gz"))
    ap.add_argument("--copies", type=int, default=6)
    ap.add_argument("--shapes", type=int, default=0, help="distinct token counts in the ops' Input Dims")
    ap.add_argument("--kernels", type=int, default=0, help="distinct kernel-name suffixes")
    ap.add_argument("--fraction", type=float, default=1.0, help="keep the first part of the source (in time)")
    a = ap.parse_args()
    info = build(Path(a.source), Path(a.out), a.copies, a.shapes, a.kernels, a.fraction)
    print(f"{a.out}: {info['events']:,} events, {info['bytes'] / 1e6:.1f} MB")


if __name__ == "__main__":
    main()
