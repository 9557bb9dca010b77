#!/usr/bin/env python3
"""perfreport against TraceLens on the same trace, in the same run.

    python benchmarks/bench_tracelens.py --tracelens PATH [--size-mb 100] [--keep FILE] [--timeout 1800] [--repeat 1]

Builds a trace of at least --size-mb MB by replicating fixtures/h100_qwen_0.5b.json.gz
(benchmarks/bench_analyze.py's ``build``), then runs, each in a fresh child process and in turn:

* ``perfreport analyze FILE -o OUT.xlsx -q`` (the whole run, workbook included);
* TraceLens's report for the same file (``PATH`` is its ``TraceLens_generate_perf_report_pytorch``
  script, say from a virtual environment of its own: AMD-AGI/TraceLens at the commit the README
  of /work/shared/traces names, with the packages its PyTorch report imports),
  ``--profile_json_path FILE --output_xlsx_path OUT.xlsx``, its default sheets.

It prints wall seconds, CPU seconds (user + system of the child and its children) and peak RSS
(``ru_maxrss``), and the ratios TraceLens / perfreport. perfreport's bytecode is compiled first (as
after a pip install; TraceLens's was written at its install). With ``--repeat N`` the two run N
times in turn and each row is the run with the least CPU (one run of the same command varies by
up to +-40% on a shared machine). The issue-21 targets: TraceLens at least
20x perfreport's time at 100 MB and at 650 MB, and at least 50x its memory at 650 MB. A child
still running after ``--timeout`` seconds is killed and reported as such.
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

_MEASURE = (
    "import resource, subprocess, sys, time; t = time.perf_counter(); "
    "r = subprocess.run(sys.argv[2:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=float(sys.argv[1])); "
    "w = time.perf_counter() - t; u = resource.getrusage(resource.RUSAGE_CHILDREN); "
    "print(r.returncode, w, u.ru_utime + u.ru_stime, u.ru_maxrss)"
)


def measure(cmd: list[str], timeout: float, env: dict) -> tuple[int, float, float, float] | None:
    """(exit code, wall s, CPU s, peak RSS MB), or None when the child ran past ``timeout``."""
    out = subprocess.run([sys.executable, "-c", _MEASURE, str(timeout), *cmd], capture_output=True, text=True, env=env)
    if out.returncode != 0:  # subprocess.TimeoutExpired in the measuring child: it killed the run
        return None
    rc, wall, cpu, rss_kb = out.stdout.split()
    return int(rc), float(wall), float(cpu), int(rss_kb) / 1024.0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--tracelens", required=True, help="TraceLens_generate_perf_report_pytorch of an installed TraceLens"
    )
    ap.add_argument("--size-mb", type=float, default=100)
    ap.add_argument("--keep", help="build the trace at (or reuse it from) this path")
    ap.add_argument("--timeout", type=float, default=1800, help="seconds each child may run")
    ap.add_argument("--repeat", type=int, default=1, help="runs of each, in turn; the least CPU is shown")
    a = ap.parse_args()
    tmp = tempfile.TemporaryDirectory()
    big = Path(a.keep) if a.keep else Path(tmp.name) / "big.json"
    if not big.exists():
        build(ROOT / "fixtures" / "h100_qwen_0.5b.json.gz", big, a.size_mb)
    mb = big.stat().st_size / 1e6
    ours_env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}
    theirs_env = {"PATH": str(Path(a.tracelens).parent) + ":/usr/bin:/bin", "MPLBACKEND": "Agg"}
    runs = [
        (
            "perfreport analyze -o xlsx -q",
            [sys.executable, "-m", "perfreport", "analyze", str(big), "-o", f"{tmp.name}/p.xlsx", "-q"],
            ours_env,
        ),
        (
            "TraceLens generate_perf_report_pytorch",
            [a.tracelens, "--profile_json_path", str(big), "--output_xlsx_path", f"{tmp.name}/t.xlsx"],
            theirs_env,
        ),
    ]
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "perfreport")], check=True)
    load = os.getloadavg()[0]
    runs_of: list[list] = [[] for _ in runs]
    for _ in range(a.repeat):  # in turn, so a change of load falls on both
        for i, (_, cmd, env) in enumerate(runs):
            runs_of[i].append(measure(cmd, a.timeout, env))
    print(f"| {mb:.0f} MB trace (load {load:.1f}) | exit | wall s | CPU s | peak RSS MB | RSS / JSON size |")
    print("|---|---|---|---|---|---|")
    got = []
    for (name, _, _), rs in zip(runs, runs_of):
        done = [r for r in rs if r is not None]
        r = min(done, key=lambda r: r[2]) if len(done) == len(rs) else None
        got.append(r)
        if r is None:
            print(f"| {name} | killed after {a.timeout:.0f} s | | | | |", flush=True)
            continue
        rc, wall, cpu, rss = r
        print(f"| {name} | {rc} | {wall:.2f} | {cpu:.2f} | {rss:.0f} | {rss / mb:.3f} |", flush=True)
        if a.repeat > 1:
            print(f"|   (CPU s of each run: {', '.join(f'{x[2]:.2f}' for x in done)}) | | | | | |")
    if all(got):
        (_, w0, c0, m0), (_, w1, c1, m1) = got
        print(f"TraceLens / perfreport: wall {w1 / w0:.1f}x, CPU {c1 / c0:.1f}x, peak RSS {m1 / m0:.1f}x")
    print(
        json.dumps(
            {
                "size_mb": round(mb, 1),
                "load_avg_1min_at_start": round(load, 1),
                "repeat": a.repeat,
                "load_avg_at_end": round(os.getloadavg()[0], 1),
            }
        )
    )
    tmp.cleanup()


if __name__ == "__main__":
    main()
