"""Headless Chromium driven over the DevTools protocol on a pipe (``--remote-debugging-pipe``:
JSON messages ending in a NUL byte, Chromium reading fd 3 and writing fd 4), networking off as
in :mod:`tests.writers.chromium`: load a page, send mouse and wheel events, evaluate script,
collect console messages, exceptions and CSP violations. Standard library only."""

from __future__ import annotations

import fcntl
import json
import os
import select
import subprocess
import time
from pathlib import Path

from tests.writers import chromium


class Browser:
    def __init__(self, tmp: Path, width: int = 1200, height: int = 900):
        self.log = open(tmp / "chromium.log", "wb")  # noqa: SIM115 (closed in close())
        r3, w3 = os.pipe()  # we write, Chromium reads (its fd 3)
        r4, w4 = os.pipe()  # Chromium writes (its fd 4), we read
        # its ends moved above 9 first, so neither can be clobbered by the other's dup2
        a, b = fcntl.fcntl(r3, fcntl.F_DUPFD, 10), fcntl.fcntl(w4, fcntl.F_DUPFD, 10)
        os.close(r3)
        os.close(w4)
        r3, w4 = a, b

        def child():  # runs before the fds outside pass_fds are closed
            os.dup2(r3, 3)
            os.dup2(w4, 4)

        cmd = [
            chromium.binary(),
            *chromium.FLAGS,
            "--remote-debugging-pipe",
            f"--user-data-dir={tmp / 'cdp-profile'}",
            f"--window-size={width},{height}",
            "about:blank",
        ]
        self.proc = subprocess.Popen(
            cmd, preexec_fn=child, pass_fds=(3, 4, r3, w4), stdout=subprocess.DEVNULL, stderr=self.log
        )
        os.close(r3)
        os.close(w4)
        self.out, self.inp = os.fdopen(w3, "wb", buffering=0), os.fdopen(r4, "rb", buffering=0)
        self.buf, self.next_id, self.events, self.session = b"", 0, [], None
        tid = self.call("Target.createTarget", url="about:blank")["targetId"]
        self.session = self.call("Target.attachToTarget", targetId=tid, flatten=True)["sessionId"]
        for domain in ("Page", "Runtime", "Log"):
            self.call(f"{domain}.enable")

    def _read(self, timeout: float) -> dict:
        end = time.monotonic() + timeout
        while b"\0" not in self.buf:
            left = end - time.monotonic()
            if left <= 0 or not select.select([self.inp], [], [], left)[0]:
                raise TimeoutError("no answer from Chromium")
            chunk = self.inp.read(1 << 16)
            if not chunk:
                raise RuntimeError("Chromium closed the pipe")
            self.buf += chunk
        msg, self.buf = self.buf.split(b"\0", 1)
        return json.loads(msg)

    def call(self, method: str, timeout: float = 60, **params) -> dict:
        self.next_id += 1
        msg = {"id": self.next_id, "method": method, "params": params}
        if self.session is not None:
            msg["sessionId"] = self.session
        self.out.write(json.dumps(msg).encode() + b"\0")
        while True:
            m = self._read(timeout)
            if m.get("id") == self.next_id:
                if "error" in m:
                    raise RuntimeError(f"{method}: {m['error']}")
                return m.get("result", {})
            self.events.append(m)

    def wait_for(self, method: str, timeout: float = 60) -> dict:
        for i, m in enumerate(self.events):
            if m.get("method") == method:
                return self.events.pop(i)
        while True:
            m = self._read(timeout)
            if m.get("method") == method:
                return m
            self.events.append(m)

    def load(self, page: Path) -> None:
        self.call("Page.navigate", url=page.resolve().as_uri())
        self.wait_for("Page.loadEventFired")

    def js(self, expr: str):
        r = self.call("Runtime.evaluate", expression=expr, returnByValue=True)
        if "exceptionDetails" in r:
            raise RuntimeError(f"{expr}: {r['exceptionDetails']}")
        return r["result"].get("value")

    def mouse(self, kind: str, x: float, y: float, **kw) -> None:
        self.call("Input.dispatchMouseEvent", type=kind, x=x, y=y, **kw)

    def problems(self) -> list[str]:
        """Console messages, uncaught exceptions and log entries (CSP violations among them)."""
        out = []
        for m in self.events:
            p = m.get("params", {})
            if m.get("method") == "Runtime.consoleAPICalled":
                out.append(f"console.{p.get('type')}: {[a.get('value') for a in p.get('args', [])]}")
            elif m.get("method") == "Runtime.exceptionThrown":
                out.append(f"exception: {p.get('exceptionDetails', {}).get('text')}")
            elif m.get("method") == "Log.entryAdded":
                e = p.get("entry", {})
                out.append(f"log {e.get('source')}/{e.get('level')}: {e.get('text')}")
        return out

    def close(self) -> None:
        self.session = None
        try:
            self.call("Browser.close", timeout=10)
        except (RuntimeError, TimeoutError, OSError):
            pass
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.out.close()
        self.inp.close()
        self.log.close()
