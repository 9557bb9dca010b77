"""Benchmark multi-rank analyze: serial vs --jobs 2 vs Ray (local), in one run.

    python benchmarks/bench_multi.py [--ranks 8] [--size-mb 100] [--jobs 2] [--keep DIR]

Builds ``--ranks`` rank traces of at least ``--size-mb`` MB each (uncompressed JSON) with
scripts/make_rank_traces.py from fixtures/h100_qwen_0.5b.json.gz (back-to-back copies,
distributedInfo, collectives), then runs ``perfreport.multi.engines.run_all`` + the merge for
each engine in a fresh Python process and prints one table: wall time, speedup over serial,
peak RSS of each process that analyzed a trace (the max over them, and as a fraction of one
trace's size), and the driver's peak RSS. Every engine's merged sheets are compared (they
must be byte-identical). The load average is printed: the machine may be shared.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

_RUN = r"""
import hashlib, json, resource, sys, time
from perfreport.multi.engines import run_all
from perfreport.multi.merge import merged_sheets
from perfreport.writers.text import csv_text
paths, engine, jobs = json.loads(sys.argv[1]), sys.argv[2], int(sys.argv[3])
t = time.perf_counter()
res = run_all(paths, {}, jobs=jobs, engine=engine)
sheets = merged_sheets([(r.dist_rank, "distributedInfo", r) for r in res])
wall = time.perf_counter() - t
digest = hashlib.sha256("".join(csv_text(s) for s in sheets).encode()).hexdigest()
print(json.dumps({"wall": wall, "workers": [r.peak_rss_mb for r in res],
                  "driver": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0,
                  "digest": digest}))
"""


def run(paths, engine, jobs):
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    load = os.getloadavg()[0]
    out = subprocess.run(
        [sys.executable, "-c", _RUN, json.dumps([str(p) for p in paths]), engine, str(jobs)],
        capture_output=True,
        text=True,
        env=env,
    )
    if out.returncode != 0:
        raise SystemExit(f"{engine}: failed:\n{out.stderr[-2000:]}")
    d = json.loads(out.stdout.strip().splitlines()[-1])
    d["load"] = load
    return d


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ranks", type=int, default=8)
    ap.add_argument("--size-mb", type=float, default=100.0)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--keep", type=Path, default=None, help="build the traces here and keep them")
    ap.add_argument("--no-ray", action="store_true")
    a = ap.parse_args()
    import make_rank_traces as mrt

    src = ROOT / "fixtures" / "h100_qwen_0.5b.json.gz"
    tmp = None
    d = a.keep
    if d is None:
        tmp = tempfile.TemporaryDirectory(prefix="bench_multi_")
        d = Path(tmp.name)
    probe = mrt.make_rank_traces(src, d / "probe", 1, copies=1, gz=False)[0]
    one = probe.stat().st_size
    copies = max(1, math.ceil(a.size_mb * 1e6 / one))
    t = time.perf_counter()
    paths = sorted(d.glob("rank*.json"))
    if len(paths) != a.ranks or any(p.stat().st_size < a.size_mb * 1e6 for p in paths):
        paths = mrt.make_rank_traces(src, d, a.ranks, copies=copies, collectives=64, gz=False)
    size_mb = sum(p.stat().st_size for p in paths) / len(paths) / 1e6
    print(
        f"{len(paths)} rank traces of {size_mb:.1f} MB ({copies} copies each), built in "
        f"{time.perf_counter() - t:.1f} s; {os.cpu_count()} cores",
        flush=True,
    )
    rows = []
    engines = [("serial", 1), ("process", a.jobs)] + ([] if a.no_ray else [("ray", a.jobs)])
    for engine, jobs in engines:
        r = run(paths, engine, jobs)
        rows.append((engine, jobs, r))
        print(f"  {engine}: {r['wall']:.1f} s", flush=True)
    base = rows[0][2]["wall"]
    same = len({r["digest"] for _, _, r in rows}) == 1
    print()
    print(
        "| engine | jobs | wall (s) | speedup | peak RSS per trace process (MB, max) | / trace size | driver peak RSS (MB) | load avg at start |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for engine, jobs, r in rows:
        w = max(x for x in r["workers"] if x is not None)
        label = (
            "serial (in the driver)"
            if engine == "serial"
            else (f"--jobs {jobs}" if engine == "process" else f"--engine ray (local, {jobs} CPUs)")
        )
        print(
            f"| {label} | {jobs} | {r['wall']:.1f} | {base / r['wall']:.2f}x | {w:.0f} | "
            f"{w / size_mb:.2f}x | {r['driver']:.0f} | {r['load']:.1f} |"
        )
    print()
    print(f"merged sheets byte-identical across engines: {'yes' if same else 'NO'}")
    if tmp is not None:
        tmp.cleanup()
    if not same:
        sys.exit(1)


if __name__ == "__main__":
    main()
