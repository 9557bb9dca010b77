"""Benchmark finding the capture regions of an SGLang-layout capture trace (tree/capture_regions.py).

    python benchmarks/bench_capture_regions.py [--sizes 35] [--ops-per-forward 2000]

Builds an in-memory capture the size SGLang writes with ``SGLANG_ENABLE_CUDA_GRAPH_CAPTURE_TRACE``
(one file, every batch size: per size two eager warm-up forwards, then one forward between
cudaStreamBeginCapture and cudaStreamEndCapture; each forward ``--ops-per-forward`` events, half
cpu_ops and half their launch calls) and times :func:`find_regions` on it (best of 3).
Prints a table: events, regions, graph nodes per region, wall time.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from perfreport.events import CPU_OP, RUNTIME  # noqa: E402
from perfreport.tree.capture_regions import find_regions  # noqa: E402


class _Ev:
    """The fields find_regions reads of an event (tree.Op has the same names)."""

    __slots__ = ("name", "cat", "pid", "tid", "ts", "dur", "kernels", "parent", "args")

    def __init__(self, name, cat, ts, dur, parent=None):
        self.name, self.cat, self.pid, self.tid, self.ts, self.dur = name, cat, 1, 1, ts, dur
        self.kernels, self.parent, self.args = None, parent, {"Input Dims": [[8, 64], [64, 64]]}

    @property
    def end(self):
        return self.ts + self.dur


class _Capture:
    def __init__(self, ops):
        self.ops = ops


def build(sizes: int, per_forward: int) -> _Capture:
    ops, t = [], 0.0
    for _ in range(sizes):
        for fwd in range(3):  # two eager warm-ups, then the capture
            if fwd == 2:
                ops.append(_Ev("cudaStreamBeginCapture", RUNTIME, t, 1.0))
                t += 1.0
            for _ in range(per_forward // 2):
                p = _Ev("aten::mm", CPU_OP, t, 3.0)
                ops += [p, _Ev("cudaLaunchKernel", RUNTIME, t + 1.0, 1.0, parent=p)]
                t += 4.0
            if fwd == 2:
                ops.append(_Ev("cudaStreamEndCapture", RUNTIME, t, 1.0))
                t += 1.0
    return _Capture(ops)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, default=35, help="captured batch sizes (SGLang: up to ~35)")
    ap.add_argument("--ops-per-forward", type=int, default=2000)
    args = ap.parse_args()
    print("| events | regions | nodes per region | find_regions (s) |\n|---|---|---|---|")
    for sizes in sorted({max(1, args.sizes // 4), args.sizes}):
        ct = build(sizes, args.ops_per_forward)
        best = float("inf")
        for _ in range(3):
            t = time.perf_counter()
            found = find_regions(ct)
            best = min(best, time.perf_counter() - t)
        print(f"| {len(ct.ops):,} | {len(found.regions)} | {len(found.regions[0].nodes)} | {best:.3f} |")


if __name__ == "__main__":
    main()
