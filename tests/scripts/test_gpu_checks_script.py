"""scripts/gpu_checks.sh without a GPU.

1. A dry run with the real python: the CPU steps (wheels, analyze's imports, `perfreport analyze`
   on a bundled trace) run and pass, every GPU step prints SKIP, exit 0.
2. GPU mode with a stub python standing in for every GPU program, the BF16 headline step failing:
   the script says FAIL for that step, still runs every later step (the FP8 paths, the table),
   exits 1, and brings back at most 8 files.
3. The offline wheel installer installs a wheel whose module is missing, with no registry.
"""

import os
import shutil
import subprocess
import sys
import zipfile

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
needs_bash = pytest.mark.skipif(
    shutil.which("bash") is None or shutil.which("timeout") is None, reason="needs bash and timeout"
)

STUB = r"""#!/usr/bin/env python3
import json, os, sys
args = sys.argv[1:]
if args and args[0].endswith("pa_gpu_table.py"):  # the table script runs for real
    os.execv(os.environ["REAL_PY"], [os.environ["REAL_PY"]] + args)
fail = os.environ.get("STUB_FAIL", "").split()
if fail and any(args[i:i + 2] == fail for i in range(len(args))):
    sys.exit(3)
def opt(name):
    return args[args.index(name) + 1] if name in args else None
if opt("-o"):
    open(opt("-o"), "w").write("xlsx")
if args and args[0].endswith("pa_bandwidth.py"):
    json.dump({"read_tb_s": 4.4, "copy_tb_s": 4.2}, open(args[1], "w"))
if args and args[0].endswith("pa_sweep.py"):
    open(args[1], "w").write("kv_dtype,status\nbf16,ok\n")
if opt("--csv"):
    kv, ours = opt("--kv-dtype"), 300.0 if opt("--kv-dtype") == "bf16" else 160.0
    with open(opt("--csv"), "w") as f:
        f.write("context,layout,backend,median_us,tb_s,speedup,status\n")
        for lay in ("NHD", "5DV"):
            f.write(f"65536,{lay},triton,{ours},{1.34e9 / ours / 1e6 / (2 if kv == 'fp8' else 1):.3f},20.0,ok\n")
            f.write(f"65536,{lay},torch,6000.0,0.2,1.0,ok\n")
if opt("--trace"):
    open(opt("--trace"), "w").write("{}")
    print("{}")
if not sys.stdin.isatty():
    sys.stdin.read()
"""


def _run(env_extra, tmp_path):
    out = tmp_path / "out"
    env = dict(os.environ, OUT=str(out), PATH=os.environ.get("PATH", ""), TMPDIR=str(tmp_path), **env_extra)
    env.pop("TRITON_INTERPRET", None)
    r = subprocess.run(
        ["bash", "scripts/gpu_checks.sh"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600
    )
    steps = {ln.split()[1]: ln.split()[0] for ln in r.stdout.splitlines() if ln.startswith(("PASS ", "FAIL ", "SKIP "))}
    return r, steps, out


ORDER = ["setup", "device", "bandwidth", "headline-bf16", "headline-fp8", "headline-fp8mma", "gpu-tests"]
ORDER += ["trace-analyze", "sweep", "table"]


@needs_bash
def test_dry_run_runs_the_cpu_steps_and_skips_the_gpu_ones(tmp_path):
    r, steps, out = _run({"GPU_CHECKS_MODE": "dry", "PYTHON": sys.executable}, tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert list(steps) == ORDER
    assert steps["setup"] == "PASS" and all(steps[s] == "SKIP" for s in ORDER[1:])
    log = (out / "log.txt").read_text()
    assert "analyze imports: ok" in log and "SKIP headline-fp8 (no GPU: dry run)" in log


@needs_bash
def test_a_failing_step_fails_loudly_and_skips_nothing_else(tmp_path):
    stub = tmp_path / "py"
    stub.write_text(STUB)
    stub.chmod(0o755)
    env = {"GPU_CHECKS_MODE": "gpu", "PYTHON": str(stub), "REAL_PY": sys.executable, "STUB_FAIL": "--kv-dtype bf16"}
    r, steps, out = _run(env, tmp_path)
    assert r.returncode == 1, r.stdout + r.stderr
    assert list(steps) == ORDER
    assert [s for s, v in steps.items() if v != "PASS"] == ["headline-bf16"] and steps["headline-bf16"] == "FAIL"
    assert "FAIL headline-bf16 (exit 3" in r.stdout and "SOME STEPS FAILED" in r.stdout
    table = (out / "table.md").read_text()
    assert "| 65536 | NHD | fp8-f16 | 160.0 |" in table and "| 65536 | 5DV | fp8-fp8 |" in table
    assert "BF16 NHD % of measured read BW: not measured" in table  # the failed path, said so
    assert "measured read bandwidth: 4.400 TB/s" in table
    assert len([p for p in out.rglob("*") if p.is_file()]) <= 8  # the device tool brings back 8 files


def _wheel(tmp_path, mod):
    w = tmp_path / f"{mod}-1.0-py3-none-any.whl"
    with zipfile.ZipFile(w, "w") as z:
        z.writestr(f"{mod}/__init__.py", "VALUE = 42\n")
        z.writestr(f"{mod}-1.0.dist-info/METADATA", f"Metadata-Version: 2.1\nName: {mod}\nVersion: 1.0\n")
        z.writestr(
            f"{mod}-1.0.dist-info/WHEEL",
            "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
        )
        z.writestr(f"{mod}-1.0.dist-info/RECORD", "")
    return w


def test_offline_installer_installs_only_what_is_missing(tmp_path):
    sys.path.insert(0, os.path.join(ROOT, "scripts"))
    try:
        import gpu_bundle_install as g
    finally:
        sys.path.pop(0)
    wheels = tmp_path / "whl"
    wheels.mkdir()
    _wheel(wheels, "h20_missing_mod")
    _wheel(wheels, "json")  # a module this Python has: left alone
    assert g.top_level_modules(wheels / "h20_missing_mod-1.0-py3-none-any.whl") == ["h20_missing_mod"]
    target = tmp_path / "site"
    r = subprocess.run(
        [sys.executable, os.path.join(ROOT, "scripts", "gpu_bundle_install.py"), str(wheels), str(target)],
        capture_output=True,
        text=True,
        timeout=300,
        env=dict(os.environ, PIP_NO_INDEX="1"),
    )
    assert r.returncode == 0, r.stdout + r.stderr
    assert "1 of 2 wheels installed" in r.stdout and "json-1.0-py3-none-any.whl: already importable" in r.stdout
    assert (target / "h20_missing_mod" / "__init__.py").read_text() == "VALUE = 42\n"
    assert not (target / "json").exists()
