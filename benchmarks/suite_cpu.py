"""CPU seconds of every test (and of the processes it started), independent of the machine's load.

A pytest plugin and its report. Run the suite (or part of it) with the plugin, then print the
slowest files and tests:

    SUITE_CPU_DIR=/tmp/cpu PYTHONPATH=$PWD:$PWD/benchmarks python -m pytest -p suite_cpu -n 2
    python benchmarks/suite_cpu.py /tmp/cpu [--top 25]

Per test (setup, call and teardown together): CPU of the pytest process (``RUSAGE_SELF``) and of
the child processes it waited for (``RUSAGE_CHILDREN``: CLI subprocesses, capture scripts, a
local Ray instance; plus the CLI runs forked by tests/cli/forked_cli.py's server, which it
reports), and the wall time. Each pytest-xdist worker writes one JSON file, with its
collection CPU too. Wall times on a shared machine grow with its load; CPU seconds barely do.

CPU per CLI start (``benchmarks/bench_small.py``'s second table): ``perfreport analyze
/nonexistent.json`` 0.65-0.70 CPU s before typer's pydantic coercion and the eager pipeline
imports were taken out of the start, 0.19-0.21 after (docs/benchmarks.md, "Fixed cost of a
small trace").
"""

from __future__ import annotations

import argparse
import collections
import glob
import json
import os
import resource
import sys
import time

import pytest

_rows: list = []
_marks: dict = {}


def _cpu() -> tuple[float, float]:
    s, c = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    # children of the tests' forked-CLI server (tests/cli/forked_cli.py): reaped by the server,
    # which this process reaps only at exit
    forked = sys.modules.get("tests.cli.forked_cli")
    return s.ru_utime + s.ru_stime, c.ru_utime + c.ru_stime + (forked.CHILD_CPU[0] if forked else 0.0)


def pytest_sessionstart(session):
    _marks["start"] = _cpu()


def pytest_collection_finish(session):
    _marks["collected"] = _cpu()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    (s0, c0), t0 = _cpu(), time.perf_counter()
    yield
    (s1, c1), t1 = _cpu(), time.perf_counter()
    _rows.append((item.nodeid, s1 - s0, c1 - c0, t1 - t0))


def pytest_sessionfinish(session):
    out = os.environ.get("SUITE_CPU_DIR")
    if not out or "start" not in _marks:
        return
    os.makedirs(out, exist_ok=True)
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    doc = {"rows": _rows, "start": _marks["start"], "collected": _marks.get("collected"), "end": _cpu()}
    with open(os.path.join(out, f"suite_cpu_{worker}.json"), "w") as f:
        json.dump(doc, f)


def report(folder: str, top: int = 25) -> None:
    rows, collect = [], []
    for path in sorted(glob.glob(os.path.join(folder, "suite_cpu_*.json"))):
        with open(path) as f:
            doc = json.load(f)
        rows += doc["rows"]
        if doc["collected"] and doc["rows"]:
            collect.append(sum(doc["collected"]) - sum(doc["start"]))
    own, kids = sum(r[1] for r in rows), sum(r[2] for r in rows)
    print(f"{len(rows)} tests: {own + kids:.1f} CPU s ({own:.1f} in pytest, {kids:.1f} in child processes)")
    if collect:
        print(f"collection: {' + '.join(f'{c:.1f}' for c in collect)} CPU s ({len(collect)} processes)")
    by_file = collections.defaultdict(lambda: [0.0, 0.0, 0])
    for nodeid, s, c, _ in rows:
        f = by_file[nodeid.split("::")[0]]
        f[0], f[1], f[2] = f[0] + s, f[1] + c, f[2] + 1
    print(f"\n{'CPU s':>7} {'child':>7} {'tests':>5}  file")
    for name, (s, c, n) in sorted(by_file.items(), key=lambda kv: -(kv[1][0] + kv[1][1]))[:top]:
        print(f"{s + c:7.1f} {c:7.1f} {n:5d}  {name}")
    print(f"\n{'CPU s':>7} {'child':>7} {'wall s':>7}  test")
    for nodeid, s, c, w in sorted(rows, key=lambda r: -(r[1] + r[2]))[:top]:
        print(f"{s + c:7.2f} {c:7.2f} {w:7.1f}  {nodeid}")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folder")
    ap.add_argument("--top", type=int, default=25)
    a = ap.parse_args()
    report(a.folder, a.top)
