"""The forked command-line runs (tests/cli/forked_cli.py) behave as fresh processes: what the
hostile-input and bad-input tables assert (exit code, stderr, traceback, output, processes left
behind) is the same whether the run was forked from the server or started from scratch."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys

from tests.cli import forked_cli
from tests.cli.forked_cli import run

_ENVIRONMENT = """
import json, os, sys, tempfile
print(json.dumps({"argv": sys.argv, "cwd": os.getcwd(), "path0": sys.path[0], "name": __name__,
                  "tmp": tempfile.gettempdir(), "stdin": sys.stdin.read(), "x": os.environ.get("X")}))
"""


def test_a_refused_input_is_byte_identical_to_a_fresh_process(tmp_path):
    forked = run("analyze", tmp_path / "missing.json", "-q", cwd=tmp_path)
    fresh = run("analyze", tmp_path / "missing.json", "-q", cwd=tmp_path, real=True)
    assert (forked.returncode, forked.stdout, forked.stderr) == (fresh.returncode, fresh.stdout, fresh.stderr)
    assert forked.returncode == 2 and b"missing.json" in forked.stderr and b"Traceback" not in forked.stderr


def test_a_sheet_on_stdout_is_byte_identical_to_a_fresh_process(tmp_path):
    from tests.cli.hostile_cases import doc, dump

    (tmp_path / "t.json").write_bytes(dump(doc(["a", "b"])))
    args = ("analyze", "t.json", "--sheet", "kernel_summary", "--format", "json", "-q")
    forked, fresh = run(*args, cwd=tmp_path), run(*args, cwd=tmp_path, real=True)
    assert forked.returncode == fresh.returncode == 0, forked.stderr
    assert forked.stdout == fresh.stdout and forked.stderr == fresh.stderr == b""
    assert [r["kernel"] for r in json.loads(forked.stdout)["rows"]] == ["a", "b"]


def test_argv_cwd_path_environment_and_stdin_are_the_childs_own(tmp_path):
    env = dict(os.environ, X="y", TMPDIR=str(tmp_path))
    kw = dict(input=b"fed", cwd=tmp_path, env=env, wrapper=_ENVIRONMENT)
    forked, fresh = run("a", "b", **kw), run("a", "b", real=True, **kw)
    assert forked.returncode == fresh.returncode == 0, forked.stderr
    got = json.loads(forked.stdout)
    assert got == json.loads(fresh.stdout)
    assert got["argv"] == ["-c", "a", "b"] and got["tmp"] == str(tmp_path) and got["stdin"] == "fed"


def test_an_uncaught_exception_prints_its_traceback_and_exits_1():
    r = run(wrapper="raise ValueError('boom')")
    assert r.returncode == 1
    assert b"Traceback" in r.stderr and b"ValueError: boom" in r.stderr


def test_a_signal_ends_the_child_as_it_would_a_process():
    r = run(wrapper="import os, signal; os.kill(os.getpid(), signal.SIGKILL)")
    assert r.returncode == -signal.SIGKILL


def test_a_process_left_behind_is_found_in_the_childs_group():
    p = forked_cli.shared().popen(
        [], os.getcwd(), dict(os.environ), False, "import os, time\nif os.fork() == 0:\n    time.sleep(30)\n"
    )
    assert p.wait(60) == 0
    left = p.group_left()
    try:
        assert len(left) == 1 and left[0] != p.pid
    finally:
        for pid in left:
            os.kill(pid, signal.SIGKILL)


def test_a_run_past_its_timeout_is_killed():
    try:
        run(wrapper="import time; time.sleep(60)", timeout=0.5)
    except subprocess.TimeoutExpired:
        pass
    else:
        raise AssertionError("no timeout")
    assert run(wrapper="import sys; sys.exit(5)").returncode == 5  # the server serves on
    assert sys.modules["tests.cli.forked_cli"] is forked_cli
