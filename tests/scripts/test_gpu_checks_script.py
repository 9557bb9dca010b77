"""scripts/gpu_checks.sh without a GPU: a stub python stands in for every step, one step fails;
the summary says PASS/FAIL per step on stdout and the script exits non-zero."""

import os
import shutil
import subprocess

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

STUB = r"""#!/usr/bin/env python3
import sys
args = sys.argv[1:]
if "--csv" in args:  # bench-pa: leave a CSV like the real one
    with open(args[args.index("--csv") + 1], "w") as f:
        f.write("context,backend\n65536,triton\n")
if "--graph" in args:
    sys.exit(3)
if not sys.stdin.isatty():
    sys.stdin.read()
"""


@pytest.mark.skipif(shutil.which("bash") is None or shutil.which("timeout") is None, reason="needs bash and timeout")
def test_summary_and_exit_code(tmp_path):
    stub = tmp_path / "py"
    stub.write_text(STUB)
    stub.chmod(0o755)
    out = tmp_path / "out"
    env = dict(os.environ, OUT=str(out), PYTHON=str(stub), PATH=os.environ.get("PATH", ""))
    r = subprocess.run(
        ["bash", "scripts/gpu_checks.sh"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )
    assert r.returncode == 1, r.stdout + r.stderr
    lines = [ln for ln in r.stdout.splitlines() if ln.startswith(("PASS ", "FAIL "))]
    names = [ln.split()[1] for ln in lines]
    assert names == ["device", "bandwidth", "gpu-tests", "seed-grid", "graph-5dv", "trace-analyze", "sweep"]
    assert [ln.split()[0] for ln in lines].count("FAIL") == 1 and lines[4].startswith("FAIL graph-5dv (exit 3")
    seed = (out / "bench_seed.csv").read_text().splitlines()
    assert seed == ["context,backend", "65536,triton", "65536,triton"]  # FP8 rows appended
    assert "== summary" in (out / "log.txt").read_text()
    assert len(list(out.iterdir())) <= 8  # the device tool brings back at most 8 files
