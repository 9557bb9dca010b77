#!/usr/bin/env python3
"""Peak RSS of ``perfreport analyze T -o T.xlsx -q`` by stage and by table, in one process.

    python benchmarks/bench_memory.py [--size-mb 100] [--keep FILE] [--compare OTHER_CHECKOUT ...]

Builds the trace as benchmarks/bench_read.py does (copies of fixtures/h100_qwen_0.5b.json.gz),
then, in a fresh child process per checkout (this one, then each ``--compare`` in turn), runs the
command line's ``main`` on it with the stage functions wrapped: on entering each stage (read,
tree, passes, each table ``build_tables`` calls, the workbook) the kernel's peak-RSS counter
(``VmHWM``) is read and reset (``/proc/self/clear_refs``), so each row's peak is exact, not
sampled. Linux only. Prints, per checkout, the RSS when the stage starts and its peak, and the
whole run's peak (``ru_maxrss``) against the JSON size.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
from bench_analyze import build  # noqa: E402

_CHILD = r"""
import json, sys
def status():
    d = {}
    for line in open("/proc/self/status"):
        k, v = line.split(":", 1)
        if k in ("VmRSS", "VmHWM"):
            d[k] = int(v.split()[0]) / 1024
    return d["VmRSS"], d["VmHWM"]
rows = []  # [stage, RSS at its start, peak]
def mark(stage):
    rss, hwm = status()
    if rows:
        rows[-1][2] = max(rows[-1][2], hwm)
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")
    rows.append([stage, rss, rss])
mark("imports (command line)")
try:
    from perfreport.cli.main import main
except ImportError:  # a checkout before cli/main.py
    from perfreport.cli.app import main
import perfreport.pipeline as P, perfreport.tables as T, perfreport.tables.perf as TP, perfreport.report as R
def wrap(mod, name, label):
    f = getattr(mod, name, None)
    if f is None:
        return
    def g(*a, **k):
        mark(label)
        try:
            return f(*a, **k)
        finally:
            mark(f"(after {label})")
    setattr(mod, name, g)
import perfreport.read as RD, perfreport.tree as TR, perfreport.passes as PS
for mod, name in ((RD, "read_trace"), (TR, "build_tree"), (PS, "run_passes")):
    wrap(mod, name, name)  # where the pipeline imports them from (at call time or at import)
    if getattr(P, name, None) is not None and getattr(P, name) is not getattr(mod, name):
        setattr(P, name, getattr(mod, name))
for name in ("gpu_timeline", "gpu_arrays", "idle_time", "fix_first", "steps_sheet", "launch_stats", "launch_queue",
             "timeline_lanes", "OpTimes", "ops_summary", "ops_summary_by_category", "ops_unique_args",
             "kernel_summary", "short_kernels"):
    wrap(T, name, name)
wrap(TP, "perf_tables", "perf_tables")
wrap(R.Report, "to_excel", "workbook")
sys.argv = ["perfreport", "analyze", sys.argv[1], "-o", sys.argv[2], "-q"]
try:
    main()
except SystemExit as e:
    code = e.code
mark("end")
print(json.dumps({"rows": rows[:-1]}))  # (ru_maxrss restarts at each reset too: the max of the rows)
"""


def run(tree: Path, trace: Path, out: Path) -> dict:
    env = {"PYTHONPATH": str(tree), "PATH": "/usr/bin:/bin"}
    r = subprocess.run(
        [sys.executable, "-c", _CHILD, str(trace), str(out)], capture_output=True, text=True, env=env, cwd="/"
    )
    if r.returncode:
        raise SystemExit(f"{tree}: child failed: {r.stderr.strip().splitlines()[-1:]}")
    return json.loads(r.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size-mb", type=float, default=100)
    ap.add_argument("--keep", help="build the trace at (or reuse it from) this path")
    ap.add_argument("--compare", action="append", default=[], help="another checkout (repeatable), in turn")
    a = ap.parse_args()
    tmp = tempfile.TemporaryDirectory()
    big = Path(a.keep) if a.keep else Path(tmp.name) / "big.json"
    if not big.exists():
        build(ROOT / "fixtures" / "h100_qwen_0.5b.json.gz", big, a.size_mb)
    mb = big.stat().st_size / 1e6
    trees = [("this tree", ROOT)] + [(Path(c).name, Path(c).resolve()) for c in a.compare]
    res = {label: run(tree, big, Path(tmp.name) / "o.xlsx") for label, tree in trees}
    for label, r in res.items():
        top = max(peak for _, _, peak in r["rows"])
        print(f"\n{label}: {mb:.0f} MB trace, peak RSS {top:.0f} MB ({top / mb:.3f}x the JSON)")
        print("| stage | RSS at start (MB) | peak (MB) | peak - start |")
        print("|---|---|---|---|")
        for stage, start, peak in r["rows"]:
            if not stage.startswith("(after"):
                print(f"| {stage} | {start:.1f} | {peak:.1f} | {peak - start:+.1f} |")
    print(json.dumps({"size_mb": round(mb, 1), "load_avg": [round(x, 1) for x in os.getloadavg()]}))
    tmp.cleanup()


if __name__ == "__main__":
    main()
