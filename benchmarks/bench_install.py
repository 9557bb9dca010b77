"""What `make demo` installs and how long it takes, in a fresh clone and a fresh venv.

    python benchmarks/bench_install.py [--rev HEAD] [--baseline REV] [--target demo]

Clones the repository at each revision into a temporary folder, runs `make <target>` there
(a new .venv: the venv's creation, pip's resolution and the installs, then the demo's analyze),
and prints wall seconds, CPU seconds of make and everything it waited for (user + sys), and the
size of the .venv. The package cache (pip's, or a local index) is whatever this machine has: run
once to warm it, then measure. The baseline, when given, runs in the same invocation, first.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def tree_mb(path: Path) -> float:
    total = 0
    for dirpath, _dirs, files in os.walk(path):
        for f in files:
            p = os.path.join(dirpath, f)
            if not os.path.islink(p):
                total += os.stat(p).st_blocks * 512
    return total / 2**20


def measure(rev: str, target: str, work: Path) -> dict:
    clone = work / f"clone-{rev.replace('/', '_')}"
    subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
    subprocess.run(["git", "-C", str(clone), "checkout", "-q", rev], check=True)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    r = subprocess.run(["make", target], cwd=clone, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if r.returncode != 0:
        sys.exit(f"make {target} at {rev} failed:\n{r.stderr[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    venv = clone / ".venv"
    pip = [str(venv / "bin" / "python"), "-m", "pip", "list", "--format=freeze"]
    packages = len(subprocess.run(pip, capture_output=True, text=True).stdout.split())
    out = {"rev": rev, "wall_s": wall, "cpu_s": cpu, "venv_mb": tree_mb(venv), "packages": packages}
    shutil.rmtree(clone)
    return out


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rev", default="HEAD")
    ap.add_argument("--baseline", help="another revision, measured first in the same run")
    ap.add_argument("--target", default="demo")
    a = ap.parse_args(argv)
    revs = ([a.baseline] if a.baseline else []) + [a.rev]
    with tempfile.TemporaryDirectory(prefix="bench-install-") as d:
        rows = [measure(rev, a.target, Path(d)) for rev in revs]
    load = os.getloadavg()[0]
    print(f"make {a.target}, fresh clone and venv ({os.cpu_count()} cores, load {load:.1f})")
    print(f"{'revision':<14} {'wall s':>8} {'CPU s':>8} {'.venv MB':>9} {'packages':>9}")
    for row in rows:
        print(
            f"{row['rev'][:14]:<14} {row['wall_s']:8.1f} {row['cpu_s']:8.1f} {row['venv_mb']:9.0f} {row['packages']:9d}"
        )
    if len(rows) == 2:
        b, h = rows
        print(
            f"ratio {h['rev'][:8]} / {b['rev'][:8]}: wall {h['wall_s'] / b['wall_s']:.2f}x, "
            f"CPU {h['cpu_s'] / b['cpu_s']:.2f}x, size {h['venv_mb'] / b['venv_mb']:.3f}x"
        )


if __name__ == "__main__":
    main()
