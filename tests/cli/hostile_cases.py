"""Generator of hostile inputs and output targets for ``perfreport analyze``.

Each :class:`Case` builds its files under a temporary directory and says what must happen:
the exit code, the stderr line(s), which output files may appear, and (for what the reader
recovers from) a check of the report's numbers. :func:`run_case` runs it with a time limit
and asserts the contract every case shares: no traceback, exactly the expected number of
stderr lines, no file left behind that the case does not allow, every input byte-identical.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from tests.cli import forked_cli
from tests.cli.forked_cli import CLI, ENV

KERNEL_US = 10.0  # every generated kernel lasts 10 µs


def events(names=("gemm",), dims=None, op_args=None):
    """Per name: a cpu_op aten::mm [64,128]x[128,32] BF16, its launch, and a 10 µs kernel."""
    ev = []
    for i, kn in enumerate(names):
        args = {
            "External id": i,
            "Input Dims": [[64, 128], [128, 32]] if dims is None else dims,
            "Input type": ["c10::BFloat16", "c10::BFloat16"],
            "Input Strides": [[128, 1], [32, 1]],
            "Concrete Inputs": ["", ""],
        }
        args.update(op_args or {})
        ev.append(
            {
                "ph": "X",
                "cat": "cpu_op",
                "name": "aten::mm",
                "pid": 1,
                "tid": 1,
                "ts": 100.0 * i,
                "dur": 50.0,
                "args": args,
            }
        )
        ev.append(
            {
                "ph": "X",
                "cat": "cuda_runtime",
                "name": "cudaLaunchKernel",
                "pid": 1,
                "tid": 1,
                "ts": 100.0 * i + 10,
                "dur": 5.0,
                "args": {"correlation": i, "External id": i},
            }
        )
        ev.append(
            {
                "ph": "X",
                "cat": "kernel",
                "name": kn,
                "pid": 0,
                "tid": 7,
                "ts": 100.0 * i + 20,
                "dur": KERNEL_US,
                "args": {"device": 0, "stream": 7, "correlation": i, "External id": i},
            }
        )
    return ev


def doc(names=("gemm",), meta=None, **kw) -> dict:
    d = {
        "schemaVersion": 1,
        "deviceProperties": [{"id": 0, "name": "NVIDIA H100 80GB HBM3"}],
        "traceEvents": events(names, **kw),
    }
    d.update(meta or {})
    return d


def dump(d) -> bytes:
    return json.dumps(d).encode()


@dataclass
class Spec:
    """What a case built: the CLI arguments (after ``analyze``), stdin, allowed outputs."""

    args: list
    stdin: bytes | Callable | None = None
    outputs: tuple = ()  # paths (relative to the case dir) that may appear
    wrapper: str | None = None  # python code run instead of ``-m perfreport``
    shell: str | None = None  # a bash command; "$@" is the CLI (for <(...), > /dev/full)
    preexec: Callable | None = None
    command: str = "analyze"  # the subcommand (diff, bench-pa)
    env: dict = field(default_factory=dict)  # added to the environment (values: "{d}" is the case dir)


@dataclass
class Case:
    name: str
    make: Callable[[Path], Spec]
    rc: int
    needle: str | None = None  # must appear in the stderr line(s), case-insensitive
    lines: int = 1
    check: Callable | None = None  # check(dir, proc) for recovered cases
    timeout: float = 60.0
    max_rss_mb: float | None = None
    max_s: float | None = None  # wall-time bound on the run (output checks)
    skip: Callable[[], str | None] = field(default=lambda: None)
    real: bool = False  # a fresh ``python -m`` process (a few per kind of case), not a forked child


def snapshot(d: Path) -> dict[str, str]:
    out = {}
    for p in sorted(d.rglob("*")):
        try:
            if p.is_symlink() or not p.is_file():
                out[str(p.relative_to(d))] = "<not a regular file>"
                continue
        except OSError:
            continue
        out[str(p.relative_to(d))] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out


def _feed(proc, gen):
    try:
        for block in gen():
            proc.stdin.write(block)
    except (BrokenPipeError, OSError, ValueError):
        pass
    finally:
        try:
            proc.stdin.close()
        except (BrokenPipeError, OSError):
            pass


def run_case(case: Case, d: Path):
    spec = case.make(d)
    before = snapshot(d)
    if spec.shell:
        cmd = ["bash", "-c", spec.shell, "bash", *CLI]
    else:
        cmd = ([sys.executable, "-c", spec.wrapper] if spec.wrapper else CLI) + [spec.command, *spec.args]
    marker = f"{case.name}-{os.getpid()}-{time.monotonic_ns()}"
    env = dict(ENV, PERFREPORT_HOSTILE_CASE=marker, **{k: v.replace("{d}", str(d)) for k, v in spec.env.items()})
    # a child forked from a server that has imported the command line (forked_cli.py), but a
    # fresh interpreter for the cases marked real, under a shell, or with a preexec function
    forked = not (forked_cli.REAL or case.real or spec.shell or spec.preexec)
    t0 = time.monotonic()
    if forked:
        proc = forked_cli.shared().popen([spec.command, *spec.args], d, env, spec.stdin is not None, spec.wrapper)
    else:
        proc = subprocess.Popen(
            cmd,
            cwd=d,
            stdin=subprocess.PIPE if spec.stdin is not None else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            preexec_fn=spec.preexec,
            env=env,
        )
    feeder = None
    if callable(spec.stdin):
        feeder = threading.Thread(target=_feed, args=(proc, spec.stdin), daemon=True)
        feeder.start()
    elif spec.stdin is not None:
        feeder = threading.Thread(target=_feed, args=(proc, lambda: [spec.stdin]), daemon=True)
        feeder.start()
    out: dict = {}

    def drain(name, stream):
        out[name] = stream.read()

    readers = [
        threading.Thread(target=drain, args=(n, s), daemon=True)
        for n, s in (("stdout", proc.stdout), ("stderr", proc.stderr))
    ]
    for r in readers:
        r.start()
    try:
        proc.wait(timeout=case.timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        raise AssertionError(f"{case.name}: still running after {case.timeout} s")
    for r in readers:
        r.join(5)
    if feeder:
        feeder.join(5)
    elapsed = time.monotonic() - t0
    left_running = _processes_with(marker, proc.group_left if forked else None)
    assert not left_running, f"{case.name}: processes left behind: {left_running}"
    err = out.get("stderr", b"").decode("utf-8", "replace")
    assert "Traceback" not in err and "Exception ignored" not in err, err
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert proc.returncode == case.rc, f"{case.name}: exit {proc.returncode}, stderr: {err}"
    assert len(lines) == case.lines, f"{case.name}: expected {case.lines} stderr line(s): {err}"
    if case.needle:
        assert case.needle.lower() in err.lower(), f"{case.name}: {case.needle!r} not in {err!r}"
    after = snapshot(d)
    for p, h in before.items():
        assert after.get(p) == h, f"{case.name}: input {p} changed or vanished"
    left = [p for p in set(after) - set(before) if not any(p == o or p.startswith(o + os.sep) for o in spec.outputs)]
    assert not left, f"{case.name}: files left behind: {sorted(left)}"
    if case.max_s is not None:
        assert elapsed < case.max_s, f"{case.name}: took {elapsed:.1f} s"
    if case.max_rss_mb is not None:  # VmHWM of the CLI process, written by PEAK_RSS
        kb = int((d / "peak_rss_kb.txt").read_text())
        assert kb / 1024 < case.max_rss_mb, f"{case.name}: peak RSS {kb} KB"
    proc.stdout_bytes = out.get("stdout", b"")
    proc.stderr_text = err
    proc.elapsed = elapsed
    if case.check:
        case.check(d, proc)
    return proc


def _processes_with(marker: str, group=None, wait_s: float = 5.0) -> list[int]:
    """Pids of live processes started by the case (its marker is in their environment, or they
    are in the forked child's process group: ``group()``); one that is exiting gets ``wait_s``
    seconds to go."""
    needle = f"PERFREPORT_HOSTILE_CASE={marker}".encode()
    deadline = time.monotonic() + wait_s
    while True:
        found = []
        for e in os.scandir("/proc"):
            if not e.name.isdigit():
                continue
            try:
                with open(f"/proc/{e.name}/environ", "rb") as f:
                    if needle in f.read():
                        with open(f"/proc/{e.name}/stat", "rb") as st:
                            if st.read().rsplit(b")", 1)[-1].split()[0] != b"Z":
                                found.append(int(e.name))
            except OSError:
                continue
        found += group() if group else []
        if not found or time.monotonic() > deadline:
            return found
        time.sleep(0.1)


# run the CLI in this interpreter and, at exit, record its peak RSS (VmHWM: this process
# only, not the pytest process it was forked from)
PEAK_RSS = """
import atexit, sys
def _hwm():
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            open("peak_rss_kb.txt", "w").write(line.split()[1])
atexit.register(_hwm)
sys.argv = ["perfreport", *sys.argv[1:]]
from perfreport.cli.main import main
main()
"""


def write(d: Path, name: str, data: bytes) -> str:
    p = d / name
    p.write_bytes(data)
    return name


def gz(data: bytes) -> bytes:
    return gzip.compress(data, compresslevel=1)
