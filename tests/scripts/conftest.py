"""Every scripts/capture_*_fixtures.py run once per test run into a temporary folder through its
command line (once for all pytest-xdist workers: the first takes a file lock and captures, the others
wait for it and read the same folder) (tests/scripts/run_captures.py: one process imports torch, then
forks one child per group, side by side; the stand-in ops a script registers live in its child's
torch op table). Without torch the tests that use ``captured`` skip."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from filelock import FileLock

from tests.scripts.kit import ROOT, WRITES


# two groups, forked side by side: scripts that define the same op name with different
# stand-ins (sglang::store_cache, vllm::moe_forward) go to different ones
GROUPS = [["capture_serving_fixtures.py"], [s for s in WRITES if s != "capture_serving_fixtures.py"]]


def _run(groups: list[list[str]], out: Path) -> subprocess.CompletedProcess:
    # the environment's thread count does not matter: stand_in_library pins torch to
    # CAPTURE_THREADS (one thread records other child ops than the committed fixtures hold)
    args = [a for g in groups for a in ("--", *g)][1:]
    return subprocess.run(
        [sys.executable, str(Path(__file__).with_name("run_captures.py")), str(out), *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.fixture(scope="session")
def captured(tmp_path_factory) -> Path:
    pytest.importorskip("torch")
    # the base temp of this run, shared by its xdist workers (each has its own below it)
    shared = tmp_path_factory.getbasetemp()
    if shared.name.startswith("popen-gw"):
        shared = shared.parent
    out, done, failed = shared / "captured", shared / "captured.done", shared / "captured.failed"
    with FileLock(str(shared / "captured.lock")):
        if not done.exists() and not failed.exists():
            out.mkdir()
            r = _run(GROUPS, out)
            (failed if r.returncode != 0 else done).write_text(r.stderr[-4000:] if r.returncode != 0 else "")
    assert not failed.exists(), failed.read_text()
    return out
