#!/usr/bin/env python3
"""The read stage and the whole run against a typed msgspec parse of the same bytes.

    python benchmarks/bench_read.py [--size-mb 100] [--keep FILE] [--repeat N] [--compare /work/main] [--pure-python]

Builds a trace of at least --size-mb MB by replicating fixtures/h100_qwen_0.5b.json.gz
(benchmarks/bench_analyze.py's ``build``: ids offset so links stay valid; 650 for the issue's
large case), then, each in a fresh child process, CPU seconds, wall seconds and peak RSS of:

* baseline: ``msgspec.json.decode(bytes, type=Trace)``, where ``Trace.traceEvents`` is a list
  of the reader's own typed event struct (``perfreport.read.schema.Ev``: the same fields,
  ``args`` left raw) -- the file read whole and parsed at C speed, the floor of any reader that
  looks at every event;
* ``read_trace``: perfreport's read stage alone (streamed batches into typed columns);
* ``perfreport analyze FILE -o OUT.xlsx -q``: the whole run.

Ratios are against the baseline measured in the same run (``--compare``: each checkout against
its own baseline; ``--pure-python``: this checkout once more with ``PERFREPORT_PURE_PYTHON=1``,
the read's Python loop instead of its C accelerator; ``--repeat``: every command N times in turn, the run with the least CPU shown,
which on a shared machine is the least disturbed one). Targets (issue 21): read <= 1.15x,
whole run <= 2x, peak RSS of the run <= 0.15x the JSON size at 650 MB.
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

_BASE = r"""
import msgspec, sys
from perfreport.read.schema import Ev
class Trace(msgspec.Struct):
    traceEvents: list[Ev]
with open(sys.argv[1], "rb") as f:
    t = msgspec.json.decode(f.read(), type=Trace)
print(len(t.traceEvents))
"""
_READ = r"""
import sys
from perfreport.read import read_trace
raw = read_trace(sys.argv[1])
print(raw.records.n_gpu)
"""
_MEASURE = (
    "import resource, subprocess, sys, time; t = time.perf_counter(); "
    "r = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL); w = time.perf_counter() - t; "
    "u = resource.getrusage(resource.RUSAGE_CHILDREN); "
    "print(r.returncode, w, u.ru_utime + u.ru_stime, u.ru_maxrss)"
)


def measure(cmd: list[str], tree: Path = ROOT, env_extra: dict | None = None) -> tuple[int, float, float, float]:
    env = {"PYTHONPATH": str(tree), "PATH": "/usr/bin:/bin", **(env_extra or {})}
    # run in the checkout: ``python -c`` / ``-m`` put the working directory first on sys.path
    out = subprocess.run(
        [sys.executable, "-c", _MEASURE, *cmd], capture_output=True, text=True, check=True, env=env, cwd=tree
    )
    rc, wall, cpu, rss_kb = out.stdout.split()
    return int(rc), float(wall), float(cpu), int(rss_kb) / 1024.0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size-mb", type=float, default=100)
    ap.add_argument("--keep", help="build the trace at (or reuse it from) this path")
    ap.add_argument("--repeat", type=int, default=1, help="run each command N times in turn; report the least CPU")
    ap.add_argument("--compare", help="another checkout (e.g. /work/main) measured in the same run, in turn")
    ap.add_argument("--pure-python", action="store_true", help="also this checkout with PERFREPORT_PURE_PYTHON=1")
    a = ap.parse_args()
    tmp = tempfile.TemporaryDirectory()
    big = Path(a.keep) if a.keep else Path(tmp.name) / "big.json"
    if not big.exists():
        build(ROOT / "fixtures" / "h100_qwen_0.5b.json.gz", big, a.size_mb)
    mb = big.stat().st_size / 1e6
    py = sys.executable
    runs = [
        ("typed msgspec parse (baseline)", [py, "-c", _BASE, str(big)]),
        ("perfreport read_trace", [py, "-c", _READ, str(big)]),
        (
            "perfreport analyze -o xlsx -q",
            [py, "-m", "perfreport", "analyze", str(big), "-o", f"{tmp.name}/o.xlsx", "-q"],
        ),
    ]
    trees = [("", ROOT, None)]
    if a.pure_python:
        trees.append(("(pure Python) ", ROOT, {"PERFREPORT_PURE_PYTHON": "1"}))
    if a.compare:
        trees.append((f"({Path(a.compare).name}) ", Path(a.compare).resolve(), None))
    best: dict = {}
    for _ in range(max(1, a.repeat)):
        for label, tree, env in trees:
            for name, cmd in runs:
                m = measure(cmd, tree, env)
                k = (label, name)
                if k not in best or m[2] < best[k][2]:
                    best[k] = m
    print(f"| {mb:.0f} MB trace | exit | wall s | CPU s | CPU / baseline | peak RSS MB | RSS / JSON size |")
    print("|---|---|---|---|---|---|---|")
    for label, _tree, _env in trees:
        base = best[(label, runs[0][0])][2]
        for name, _cmd in runs:
            rc, wall, cpu, rss = best[(label, name)]
            row = f"| {label}{name} | {rc} | {wall:.2f} | {cpu:.2f} | {cpu / base:.2f} | {rss:.0f} | {rss / mb:.3f} |"
            print(row, flush=True)
    print(json.dumps({"size_mb": round(mb, 1), "repeat": a.repeat, "load_avg": [round(x, 1) for x in os.getloadavg()]}))
    tmp.cleanup()


if __name__ == "__main__":
    main()
