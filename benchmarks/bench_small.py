#!/usr/bin/env python3
"""The fixed cost: a ~3 MB trace analyzed end to end with the workbook, against interpreter start.

    python benchmarks/bench_small.py [--tree DIR] [--repeat 3]

Builds a 3.1 MB trace (the first half, in time, of fixtures/h100_qwen_0.5b.json.gz:
``benchmarks/make_wide_trace.py --copies 1 --fraction 0.5``) and measures, in fresh child
processes, the CPU seconds (user + system; median and best of ``--repeat`` runs, the checkouts in turn) of:

* ``python -c pass`` (the baseline: interpreter start),
* ``python -c "import perfreport.cli.main"`` (the command line's imports: a plain ``analyze`` line runs from it without typer),
* ``python -m perfreport analyze T -o T.xlsx -q`` (the whole run, workbook included),

with this checkout on PYTHONPATH and, with ``--tree DIR``, the same for another checkout (say a
``git worktree`` of the previous release) in the same run. A second table: starts that read no
trace (``perfreport --help``, ``perfreport archs``, ``analyze`` of a missing, an empty and a
not-JSON file: what most of the test suite's ~140 CLI subprocesses cost). Bytecode is compiled first and may be
written (PYTHONDONTWRITEBYTECODE is unset for the children), as after a pip install. The issue-21
target: the whole run at most 0.5 s of CPU beyond interpreter start.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# the command line's imports (a checkout before cli/main.py: cli/app.py's)
_IMPORTS = (
    "import importlib, importlib.util as u; "
    "importlib.import_module('perfreport.cli.main' if u.find_spec('perfreport.cli.main') else 'perfreport.cli.app')"
)
_MEASURE = (
    "import resource, subprocess, sys; r = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL); "
    "u = resource.getrusage(resource.RUSAGE_CHILDREN); print(r.returncode, u.ru_utime + u.ru_stime)"
)


def cpu_once(cmd: list[str], tree: Path, cwd: str) -> tuple[int, float]:
    """(exit code, CPU s) of ``cmd`` with ``tree`` on PYTHONPATH, run in ``cwd`` (not a checkout:
    ``python -m`` and ``-c`` put the working directory first on sys.path)."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPATH")}
    env["PYTHONPATH"] = str(tree)
    out = subprocess.run(
        [sys.executable, "-c", _MEASURE, *cmd], capture_output=True, text=True, check=True, env=env, cwd=cwd
    )
    rc, c = out.stdout.split()
    return int(rc), float(c)


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
            f"| checkout ({mb:.1f} MB trace) | interpreter start CPU s | imports CPU s | analyze + workbook CPU s | "
            "beyond start (median) | beyond start (best) |"
        )
        print("|---|---|---|---|---|---|")
        cmds = {
            "start": [py, "-c", "pass"],
            "imports": [py, "-c", _IMPORTS],
            "run": [py, "-m", "perfreport", "analyze", str(t), "-o", f"{d}/s.xlsx", "-q"],
        }
        for _, tree in trees:
            subprocess.run(
                [py, "-m", "compileall", "-q", str(tree / "perfreport")], check=True, stdout=subprocess.DEVNULL
            )
        (Path(d) / "empty.json").write_bytes(b"")
        (Path(d) / "bad.json").write_bytes(b"not JSON")
        starts = {
            "perfreport --help": [py, "-m", "perfreport", "--help"],
            "perfreport archs": [py, "-m", "perfreport", "archs"],
            "analyze /nonexistent.json": [py, "-m", "perfreport", "analyze", "/nonexistent.json"],
            "analyze empty.json": [py, "-m", "perfreport", "analyze", str(Path(d) / "empty.json")],
            "analyze bad.json (not JSON)": [py, "-m", "perfreport", "analyze", str(Path(d) / "bad.json")],
        }
        got: dict = {(name, k): [] for name, _ in trees for k in [*cmds, *starts]}
        rcs = {}
        for _ in range(a.repeat):  # the checkouts in turn, so a change of load falls on both
            for name, tree in trees:
                for k, cmd in {**cmds, **starts}.items():
                    rc, c = cpu_once(cmd, tree, d)
                    got[(name, k)].append(c)
                    rcs[name] = rc if k == "run" else rcs.get(name, 0)
        for name, _ in trees:
            med = {k: statistics.median(got[(name, k)]) for k in cmds}
            best = {k: min(got[(name, k)]) for k in cmds}
            print(
                f"| {name} (exit {rcs[name]}) | {med['start']:.3f} | {med['imports']:.3f} | {med['run']:.3f} | "
                f"{med['run'] - med['start']:.3f} | {best['run'] - best['start']:.3f} |",
                flush=True,
            )
        print()
        print("| start that reads no trace (CPU s, median) | " + " | ".join(name for name, _ in trees) + " |")
        print("|---|" + "---|" * len(trees))
        for k in starts:
            print(f"| `{k}` | " + " | ".join(f"{statistics.median(got[(name, k)]):.3f}" for name, _ in trees) + " |")
        print(f"(medians and bests of {a.repeat} runs each, in turn; load average {os.getloadavg()[0]:.1f} at the end)")


if __name__ == "__main__":
    main()
