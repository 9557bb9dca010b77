#!/usr/bin/env python3
"""The fixed cost: a ~3 MB trace analyzed end to end with the workbook, against interpreter start.

    python benchmarks/bench_small.py [--tree DIR] [--repeat 3]

Builds a 3.1 MB trace (the first half, in time, of fixtures/h100_qwen_0.5b.json.gz:
``benchmarks/make_wide_trace.py --copies 1 --fraction 0.5``) and measures, in fresh child
processes, the CPU seconds (user + system, best of ``--repeat``) of:

* ``python -c pass`` (the baseline: interpreter start),
* ``python -c "import perfreport.cli.app"`` (the command line's imports),
* ``python -m perfreport analyze T -o T.xlsx -q`` (the whole run, workbook included),

with this checkout on PYTHONPATH and, with ``--tree DIR``, the same for another checkout (say a
``git worktree`` of the previous release) in the same run. Bytecode is compiled first and may be
written (PYTHONDONTWRITEBYTECODE is unset for the children), as after a pip install. The issue-21
target: the whole run at most 0.5 s of CPU beyond interpreter start.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
_MEASURE = (
    "import resource, subprocess, sys; r = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL); "
    "u = resource.getrusage(resource.RUSAGE_CHILDREN); print(r.returncode, u.ru_utime + u.ru_stime)"
)


def cpu(cmd: list[str], tree: Path, repeat: int) -> tuple[int, float]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPATH")}
    env["PYTHONPATH"] = str(tree)
    best, rc = None, 0
    for _ in range(repeat):
        out = subprocess.run(
            [sys.executable, "-c", _MEASURE, *cmd], capture_output=True, text=True, check=True, env=env
        )
        rc, c = out.stdout.split()
        best = float(c) if best is None else min(best, float(c))
    return int(rc), best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tree", help="another checkout to measure in the same run (e.g. the previous release)")
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        t = Path(d) / "small.json"
        subprocess.run(
            [
                sys.executable,
                str(ROOT / "benchmarks" / "make_wide_trace.py"),
                str(t),
                "--copies",
                "1",
                "--fraction",
                "0.5",
            ],
            check=True,
            stdout=subprocess.DEVNULL,
        )
        mb = t.stat().st_size / 1e6
        py = sys.executable
        trees = [("this tree", ROOT)] + ([(f"--tree {a.tree}", Path(a.tree).resolve())] if a.tree else [])
        print(
            f"| checkout ({mb:.1f} MB trace) | interpreter start CPU s | imports CPU s | analyze + workbook CPU s | beyond start |"
        )
        print("|---|---|---|---|---|")
        for name, tree in trees:
            subprocess.run(
                [py, "-m", "compileall", "-q", str(tree / "perfreport")], check=True, stdout=subprocess.DEVNULL
            )
            _, start = cpu([py, "-c", "pass"], tree, a.repeat)
            _, imp = cpu([py, "-c", "import perfreport.cli.app"], tree, a.repeat)
            rc, run = cpu([py, "-m", "perfreport", "analyze", str(t), "-o", f"{d}/s.xlsx", "-q"], tree, a.repeat)
            print(f"| {name} (exit {rc}) | {start:.3f} | {imp:.3f} | {run:.3f} | {run - start:.3f} |", flush=True)


if __name__ == "__main__":
    main()
