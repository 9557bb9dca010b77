"""The command line run in real processes without paying its start each time.

Starting ``python -m perfreport`` costs ~0.8 CPU s before it reads a byte (the
interpreter, typer, rich, numpy, the pipeline), and the hostile-input tables start ~140 of
them. :class:`Server` is a process that has imported the command line once; for each run it
forks a child that takes the test's pipes as its stdin/stdout/stderr, its working directory,
environment and argv, and runs the entry point as ``python -m`` (or ``python -c`` for a
wrapper) would, at top level: its exit status (or signal), its stderr, a traceback from an
uncaught exception and the interpreter's own finalization are the child's, exactly as in a
fresh process. What the child does not redo is the interpreter's start and the imports:
tests of the start itself (``--help`` speed, what importing the CLI pulls in) and of
behaviour that needs a shell keep a real subprocess (``hostile_cases.run_case`` chooses);
``PERFREPORT_TEST_REAL_PROCESSES=1`` runs every case in a fresh process instead, to compare.

The child leads a new process group, so processes it leaves behind are found by group
(:meth:`ForkedProc.group_left`) as well as by the marker in their environment.
"""

from __future__ import annotations

import atexit
import json
import os
import select
import signal
import socket
import subprocess
import sys
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# the server's environment: this checkout first on the path (the children inherit its modules)
ENV = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
CLI = [sys.executable, "-m", "perfreport"]
# every run in a fresh interpreter (as the ones asked ``real`` always are), to compare
REAL = os.environ.get("PERFREPORT_TEST_REAL_PROCESSES") == "1"

# preloaded by the server (imports only: nothing of the command line runs there): every module
# of perfreport but perfreport.__main__, which the child runs as __main__ (as -m does: no module
# of that name is loaded before it), and the paged-attention bench (torch, triton); and what the
# command line imports as it runs (typer's option parsing imports pydantic)
_SKIP = ("perfreport.__main__", "perfreport.pa.")
_THIRD_PARTY = ("pydantic", "importlib.metadata", "rich.console", "rich.progress", "rich.table", "openpyxl", "csv")
_MAX_MSG = 1 << 20
# CPU seconds (user + sys) of the server's start and of every child it reaped: this process's
# RUSAGE_CHILDREN counts them only once the server is waited for (at exit); the suite's CPU
# report (benchmarks/suite_cpu.py) adds this to each test's child-process CPU
CHILD_CPU = [0.0]


class ForkedProc:
    """The subset of :class:`subprocess.Popen` that ``run_case`` uses, for a forked child."""

    def __init__(self, server: "Server", pid: int, stdin, stdout, stderr):
        self.server, self.pid, self.returncode = server, pid, None
        self.stdin, self.stdout, self.stderr = stdin, stdout, stderr

    def poll(self):
        if self.returncode is None and select.select([self.server.sock], [], [], 0)[0]:
            self._read_status()
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        if self.returncode is None:
            if not select.select([self.server.sock], [], [], timeout)[0]:
                raise subprocess.TimeoutExpired(f"forked pid {self.pid}", timeout)
            self._read_status()
        return self.returncode

    def _read_status(self) -> None:
        msg = json.loads(self.server.sock.recv(_MAX_MSG) or b'{"status": null}')
        if msg.get("status") is None:
            raise RuntimeError("the forked-CLI server died")
        assert msg["pid"] == self.pid, msg
        self.returncode = msg["status"]
        CHILD_CPU[0] += msg["cpu"]

    def kill(self) -> None:
        if self.returncode is None:
            try:
                os.kill(self.pid, signal.SIGKILL)  # not reaped before the server's waitpid: no reuse
            except ProcessLookupError:
                pass

    def group_left(self) -> list[int]:
        """Live processes still in the child's process group (it led one; it has exited)."""
        found = []
        for e in os.scandir("/proc"):
            if e.name.isdigit():
                try:
                    with open(f"/proc/{e.name}/stat", "rb") as f:
                        fields = f.read().rsplit(b")", 1)[-1].split()
                except OSError:
                    continue
                if int(fields[2]) == self.pid and fields[0] != b"Z":
                    found.append(int(e.name))
        return found


class Server:
    """One per pytest process, started on first use; it ends when its socket closes."""

    def __init__(self, env: dict):
        self.sock, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.proc = subprocess.Popen(
            [sys.executable, __file__, str(theirs.fileno())],
            pass_fds=(theirs.fileno(),),
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
        )
        theirs.close()
        self.current: ForkedProc | None = None
        atexit.register(self.close)  # wait for it: its CPU (and its children's) joins this process's
        if not select.select([self.sock], [], [], 300)[0]:
            raise RuntimeError("the forked-CLI server did not start")
        CHILD_CPU[0] += json.loads(self.sock.recv(_MAX_MSG))["cpu"]

    def close(self) -> None:
        if self.current is not None:  # a run a failed test left going: the server waits for it
            self.current.kill()
        self.sock.close()
        self.proc.wait()

    def popen(self, argv: list[str], cwd, env: dict, stdin_pipe: bool, wrapper: str | None = None) -> ForkedProc:
        """Fork a child running ``argv`` (after ``python -m perfreport``, or after
        ``python -c wrapper``) with pipes for stdout and stderr, and one for stdin when asked."""
        if self.current is not None and self.current.returncode is None:  # a run abandoned by a failed test
            self.current.kill()
            self.current.wait()
        in_r, in_w = os.pipe() if stdin_pipe else (os.open(os.devnull, os.O_RDONLY), None)
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        req = {"argv": [str(a) for a in argv], "cwd": str(cwd), "env": env, "wrapper": wrapper}
        socket.send_fds(self.sock, [json.dumps(req).encode()], [in_r, out_w, err_w])
        for fd in (in_r, out_w, err_w):
            os.close(fd)
        pid = json.loads(self.sock.recv(_MAX_MSG))["pid"]
        self.current = ForkedProc(
            self, pid, open(in_w, "wb") if in_w is not None else None, open(out_r, "rb"), open(err_r, "rb")
        )
        return self.current


_servers: list[Server] = []


def shared() -> Server:
    """This process's server (started on first use)."""
    if not _servers:
        _servers.append(Server(ENV))
    return _servers[0]


def run(*args, input=None, cwd=None, env=None, text=False, timeout=300.0, real=False, wrapper=None):
    """``subprocess.run(CLI + args, capture_output=True, ...)`` (``python -c wrapper args`` with a
    wrapper) in a child forked from the server; with ``real``, or PERFREPORT_TEST_REAL_PROCESSES=1,
    in a fresh interpreter."""
    argv = [str(a) for a in args]
    cmd = ([sys.executable, "-c", wrapper] if wrapper is not None else CLI) + argv
    if real or REAL:
        return subprocess.run(cmd, input=input, capture_output=True, cwd=cwd, env=env, text=text, timeout=timeout)
    data = input.encode() if isinstance(input, str) else input
    p = shared().popen(argv, cwd or os.getcwd(), dict(os.environ if env is None else env), data is not None, wrapper)
    got: dict = {}

    def drain(name, f):
        with f:
            got[name] = f.read()

    def feed():
        try:
            p.stdin.write(data)
            p.stdin.close()
        except (BrokenPipeError, OSError):
            pass

    threads = [threading.Thread(target=drain, args=a, daemon=True) for a in (("out", p.stdout), ("err", p.stderr))]
    threads += [threading.Thread(target=feed, daemon=True)] if data is not None else []
    for t in threads:
        t.start()
    try:
        p.wait(timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()
        raise
    for t in threads:
        t.join()
    out, err = got["out"], got["err"]
    if text:  # as subprocess's text mode: the locale's encoding, universal newlines
        out, err = (b.decode().replace("\r\n", "\n").replace("\r", "\n") for b in (out, err))
    return subprocess.CompletedProcess(cmd, p.returncode, out, err)


def _serve(sock: socket.socket) -> dict:
    """The server's loop; returns (in the forked child only) the request the child runs."""
    while True:
        msg, fds, _, _ = socket.recv_fds(sock, _MAX_MSG, 3)
        if not msg:
            os._exit(0)
        pid = os.fork()
        if pid == 0:
            sock.close()
            os.setpgid(0, 0)
            for target, fd in enumerate(fds):
                os.dup2(fd, target)
                os.close(fd)
            return json.loads(msg)
        for fd in fds:
            os.close(fd)
        try:
            sock.send(json.dumps({"pid": pid}).encode())
            _, status, ru = os.wait4(pid, 0)
            code, cpu = os.waitstatus_to_exitcode(status), ru.ru_utime + ru.ru_stime
            sock.send(json.dumps({"pid": pid, "status": code, "cpu": cpu}).encode())
        except OSError:  # the tests' process has gone (it killed the child first)
            os._exit(0)


def _child(req: dict) -> None:
    """Become ``python -m perfreport ARGS`` (or ``python -c WRAPPER ARGS``) in ``cwd``."""
    import runpy
    import tempfile
    import types

    os.chdir(req["cwd"])
    os.environ.clear()
    os.environ.update(req["env"])
    tempfile.tempdir = None  # gettempdir() reads TMPDIR again
    if req["wrapper"] is None:
        sys.argv = ["-m", *req["argv"]]  # run_module puts the module's path first
        sys.path[0] = os.getcwd()  # what -m puts there
        runpy.run_module("perfreport", run_name="__main__", alter_sys=True)
    else:
        sys.argv = ["-c", *req["argv"]]
        sys.path[0] = ""  # what -c puts there
        main = types.ModuleType("__main__")
        sys.modules["__main__"] = main
        exec(compile(req["wrapper"], "<string>", "exec"), main.__dict__)


if __name__ == "__main__":
    import importlib
    import resource

    _sock = socket.socket(fileno=int(sys.argv[1]))
    import pkgutil

    import perfreport

    for _m in pkgutil.walk_packages(perfreport.__path__, "perfreport."):
        if not _m.name.startswith(_SKIP):
            importlib.import_module(_m.name)
    for _name in _THIRD_PARTY:
        try:
            importlib.import_module(_name)
        except ImportError:  # an extra not installed: the child reports it as a fresh process would
            pass
    import gc

    # the imported objects out of the collector's reach: a child's collections and its
    # interpreter's finalization would touch (copy) every page of them (0.14 -> 0.04 CPU s
    # for a child that only exits)
    gc.freeze()
    sys.stdout.flush()
    _ru = resource.getrusage(resource.RUSAGE_SELF)
    _sock.send(json.dumps({"cpu": _ru.ru_utime + _ru.ru_stime}).encode())
    _child(_serve(_sock))
