"""What the between-the-kernels sheets (fix_first, steps, idle_time, launch_stats, launch_queue)
cost, against the analysis that builds every other sheet, in the same run.

    python benchmarks/bench_between_kernels.py [--size-mb 650] [--source fixtures/h100_qwen_0.5b.json.gz]

Builds a trace of at least --size-mb MB by replicating a real one (``bench_analyze.build``: each
copy shifted in time with its ids offset, so kernels keep their launches; each copy is one more
ProfilerStep), loads the tree once, then times, each the best of 3 runs:
  * baseline: the analysis without the five sheets: read -> tree -> passes (once) plus
    ``build_tables`` without them (best of 3),
  * the five sheets alone on the same tree (best of 3),
  * the HTML page's time-axis data (``timeline_lanes``: lanes, idle rows, steps, downsampled to
    its payload cap) on the same tree (best of 3; analyze builds it with the five sheets).
Prints a table; ratios are over the baseline's time.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_analyze import build  # noqa: E402


def best(fn, n=3):
    t = []
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        t.append(time.perf_counter() - t0)
    return min(t)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--size-mb", type=float, default=650.0)
    ap.add_argument("--source", default=str(ROOT / "fixtures" / "h100_qwen_0.5b.json.gz"))
    a = ap.parse_args()
    from perfreport import tables as T
    from perfreport.pipeline import load_tree
    from perfreport.specs import detect_arch

    with tempfile.TemporaryDirectory() as tmp:
        big = Path(tmp) / "big.json"
        copies, n_events = build(Path(a.source), big, a.size_mb)
        big_mb = big.stat().st_size / 1e6
        t0 = time.perf_counter()
        tree = load_tree(str(big))
        t_tree = time.perf_counter() - t0
    spec = detect_arch(tree.meta.get("deviceProperties"))
    keep = T._between_kernels
    T._between_kernels = lambda *args, **kw: []
    try:
        base = best(lambda: T.build_tables(tree, spec=spec))
    finally:
        T._between_kernels = keep
    whole = t_tree + base
    sheets, _ = T.build_tables(tree, spec=spec)
    by = {s.name: s for s in sheets}

    def five():
        between = keep(tree, True, None)  # steps, idle, launch_stats, launch_queue
        return T.fix_first(by["gpu_timeline"], by.get("unified_perf_summary"), between[1], 0.8)

    new = best(five)
    from perfreport.tables.gpu_arrays import gpu_arrays
    from perfreport.tables.steps import steps_sheet
    from perfreport.tables.lanes import timeline_lanes
    from perfreport.tree.steps import find_steps

    arr = gpu_arrays(tree)
    found = find_steps(tree)
    recs = steps_sheet(tree, arr, found).records()
    box: dict = {}
    lanes = best(lambda: box.update(tl=timeline_lanes(tree, arr, found, recs)))
    tl = box["tl"]
    print(
        f"trace: {big_mb:.0f} MB ({copies} copies of {Path(a.source).name}, {n_events} events), {len(tree.gpu)} GPU events"
    )
    print(f"{'stage':<44}{'time (s)':>10}{'ratio':>8}")
    print(f"{'analysis without the five sheets (baseline)':<44}{whole:>10.3f}{1.0:>8.2f}")
    print(f"{'  of which the other tables':<44}{base:>10.3f}{base / whole:>8.2f}")
    print(f"{'fix_first + steps + idle + launches + queue':<44}{new:>10.3f}{new / whole:>8.2f}")
    print(f"{'HTML time-axis data (timeline_lanes)':<44}{lanes:>10.3f}{lanes / whole:>8.2f}")
    how = f"merged at R = {tl['resolution']:,}" if tl["merged"] else "every event drawn"
    print(f"time-axis payload: {tl['bytes'] / 1e6:.2f} MB, {tl['blocks']:,} blocks of {tl['events']:,} events ({how})")


if __name__ == "__main__":
    main()
