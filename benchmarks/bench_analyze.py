"""Benchmark `perfreport analyze` against a plain `json.load` of the same file.

    python benchmarks/bench_analyze.py [--size-mb 500] [--source fixtures/h100_qwen_0.5b.json.gz] [--phases]

Builds a trace of at least --size-mb MB (uncompressed) by replicating a real trace: each
copy shifts timestamps past the previous copy and offsets every id that links events
(``correlation``, ``External id``, ac2g flow ``id``), so kernels still link to their launches.
Then, in the same run, measures wall time and peak RSS (of a fresh child process each) for:
  * json.load of the file (baseline; the document only, no analysis),
  * perfreport analyze FILE -o OUT.xlsx -q (read, tree, passes, models, all sheets, workbook).
Prints a table; ratios are against the baseline measured in this run. ``--phases`` adds the
wall time and RSS after each stage of analyze (read, tree, passes, sheets, workbook).
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))
from make_rank_traces import shift_event  # noqa: E402  (shared with the multi-rank traces)

ROOT = Path(__file__).resolve().parent.parent


def build(source: Path, dst: Path, size_mb: float) -> tuple[int, int]:
    doc = json.loads(gzip.open(source).read())
    events = doc.pop("traceEvents")
    ts = [e["ts"] for e in events if isinstance(e.get("ts"), (int, float))]
    span = max(ts) - min(ts) + 1000.0
    id_step = 10**7
    target = size_mb * 1e6
    copies = 0
    n_events = 0
    with open(dst, "w") as f:
        f.write("{\n")
        for k, v in doc.items():
            f.write(f'  {json.dumps(k)}: {json.dumps(v)},\n')
        f.write('  "traceEvents": [\n')
        first = True
        while f.tell() < target:
            off_t = copies * span
            off_id = copies * id_step
            for e in events:
                e2 = shift_event(e, off_t, off_id)
                f.write(("" if first else ",\n") + "    " + json.dumps(e2))
                first = False
                n_events += 1
            copies += 1
        f.write("\n  ]\n}\n")
    return copies, n_events


_MEASURE = (
    "import resource, subprocess, sys, time; t = time.perf_counter(); "
    "r = subprocess.run(sys.argv[1:]); w = time.perf_counter() - t; "
    "print(r.returncode, w, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)"
)


def measure(cmd: list[str]) -> tuple[int, float, float]:
    out = subprocess.run([sys.executable, "-c", _MEASURE, *cmd], capture_output=True, text=True, check=True)
    rc, wall, rss_kb = out.stdout.split()
    return int(rc), float(wall), int(rss_kb) / 1024.0


_PHASES = r"""
import resource, sys, time
t0 = time.perf_counter()
def rss():
    with open("/proc/self/status") as f:
        return next(int(l.split()[1]) // 1024 for l in f if l.startswith("VmRSS"))
from perfreport.passes import run_passes
from perfreport.read import read_trace
from perfreport.specs import detect_arch
from perfreport.tables import build_sheets
from perfreport.tree import build_tree
from perfreport.writers.excel import write_workbook
rows = [("imports", time.perf_counter() - t0, rss())]
t = time.perf_counter(); raw = read_trace(sys.argv[1]); rows.append(("read", time.perf_counter() - t, rss()))
t = time.perf_counter(); tree = build_tree(raw); del raw; rows.append(("tree", time.perf_counter() - t, rss()))
t = time.perf_counter(); run_passes(tree); rows.append(("passes", time.perf_counter() - t, rss()))
t = time.perf_counter()
sheets = build_sheets(tree, spec=detect_arch(tree.meta.get("deviceProperties")))
rows.append(("sheets", time.perf_counter() - t, rss()))
t = time.perf_counter(); write_workbook(sheets, sys.argv[2], []); rows.append(("workbook", time.perf_counter() - t, rss()))
for name, w, r in rows:
    print(f"| {name} | {w:.2f} | {r} |")
print(f"| (peak RSS) | | {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024} |")
print(f"records: {len(tree.ops):,} ops, {len(tree.gpu):,} GPU events of {tree.n_events:,} trace events")
"""


def phases(big: Path, out: Path) -> str:
    """Wall time and RSS after each stage of analyze, in one fresh child process."""
    r = subprocess.run([sys.executable, "-c", _PHASES, str(big), str(out)], capture_output=True, text=True, check=True)
    return r.stdout


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size-mb", type=float, default=500)
    ap.add_argument("--source", default=str(ROOT / "fixtures" / "h100_qwen_0.5b.json.gz"))
    ap.add_argument("--keep", action="store_true", help="keep the generated trace")
    ap.add_argument(
        "--phases", action="store_true", help="also time each stage (read, tree, passes, sheets, workbook) in a child"
    )
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        big = Path(d) / "big_trace.json"
        t = time.perf_counter()
        copies, n = build(Path(args.source), big, args.size_mb)
        size = big.stat().st_size
        print(
            f"built {big.name}: {size / 1e6:.0f} MB, {n:,} events ({copies} copies of "
            f"{Path(args.source).name}) in {time.perf_counter() - t:.1f} s",
            flush=True,
        )
        base = measure([sys.executable, "-c", f"import json; json.load(open({str(big)!r}))"])
        ours = measure([sys.executable, "-m", "perfreport", "analyze", str(big), "-o", str(Path(d) / "out.xlsx"), "-q"])
        rows = [("json.load (baseline)", *base), ("perfreport analyze", *ours)]
        print()
        print("| command | exit | wall (s) | peak RSS (MB) | wall / baseline | RSS / JSON size |")
        print("|---|---|---|---|---|---|")
        for name, rc, wall, rss in rows:
            print(f"| {name} | {rc} | {wall:.2f} | {rss:.0f} | {wall / base[1]:.2f} | {rss * 2**20 / size:.3f} |")
        print(
            f"\nMB/s: json.load {size / 1e6 / base[1]:.0f}, analyze {size / 1e6 / ours[1]:.0f}; "
            f"{os.cpu_count()} CPUs; python {sys.version.split()[0]}"
        )
        if args.phases:
            print("\n| stage | wall (s) | RSS after (MB) |\n|---|---|---|")
            print(phases(big, Path(d) / "phases.xlsx"), end="")
        if args.keep:
            keep = ROOT / "bench_out"
            keep.mkdir(exist_ok=True)
            big.rename(keep / big.name)


if __name__ == "__main__":
    main()
