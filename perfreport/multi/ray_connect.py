"""``--engine ray``: the address checked and reached within a time limit before Ray is asked,
and a local instance's session files kept in a folder of ours that goes when it stops.

``ray.init(address=...)`` retries an unreachable head until it is killed and raises a
traceback-worthy ``ValueError`` on a malformed address. Here the address must be ``auto``,
``local``, ``HOST:PORT`` or ``ray://HOST:PORT`` (the forms ``ray.init`` documents), the head's
port must accept a TCP connection within :data:`CONNECT_S` seconds, and any error Ray raises
afterwards becomes one :class:`~perfreport.errors.BadInput` line (exit 2).

A local instance (no address) writes its session (logs, sockets, spilled objects) under
``$RAY_TMPDIR`` / ``$TMPDIR`` / ``/tmp`` + ``ray/`` and leaves it there (``ray/session_*``);
:func:`session_dir` gives it a fresh folder there instead (``ray.init(_temp_dir=...)``) and
removes it after ``ray.shutdown()``.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import tempfile

from perfreport.errors import BadInput

CONNECT_S = 10.0
FORMS = "HOST:PORT, ray://HOST:PORT, auto or local"


def parse(address: str) -> tuple[str, int] | None:
    """(host, port) of an address to probe; None for ``auto`` / ``local``; BadInput if malformed."""
    a = address.strip()
    if a in ("auto", "local"):
        return None
    rest = a[len("ray://") :] if a.startswith("ray://") else a
    host, sep, port = rest.rpartition(":")
    host = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    if not sep or not host or any(c.isspace() or c in "/?#@" for c in host) or not port.isdigit():
        raise BadInput("--ray-address", f"{address!r} is not an address ({FORMS})")
    if not 0 < int(port) < 65536:
        raise BadInput("--ray-address", f"{address!r}: port {port} is not in [1, 65535]")
    return host, int(port)


def check_address(address: str, timeout: float = CONNECT_S) -> None:
    """BadInput unless ``address`` is well formed and its port answers within ``timeout`` s."""
    hp = parse(address)
    if hp is None:
        return
    try:
        with socket.create_connection(hp, timeout=timeout):
            pass
    except socket.timeout:
        raise BadInput("--ray-address", f"{address}: no answer within {timeout:g} s") from None
    except OSError as exc:
        raise BadInput("--ray-address", f"cannot connect to {address}: {exc.strerror or exc}") from None


@contextlib.contextmanager
def ray_errors(address: str | None):
    """Any error Ray raises, as one BadInput line naming the engine (and the address)."""
    try:
        yield
    except BadInput:
        raise
    except Exception as exc:  # Ray raises many kinds (ConnectionError, RuntimeError, ValueError, its own)
        first = (str(exc).strip().splitlines() or [""])[0][:300]
        where = f"--ray-address {address}" if address else "--engine ray"
        raise BadInput(where, f"Ray failed: {type(exc).__name__}: {first}") from None


# A Unix socket path is at most 107 bytes (sun_path is 108 with the NUL). Ray puts its sockets at
# <temp>/session_<date>_<time>_<us>_<pid>/sockets/plasma_store (and raylet): about 65 bytes past
# <temp>, with a 7-digit pid.
SOCKET_PATH_MAX = 107
SESSION_TAIL = len("/session_2026-12-01_23-29-02_352415_1234567/sockets/plasma_store")
PREFIX = "perfreport-ray-"


def session_base() -> str:
    """Where Ray would put ``ray/`` ($RAY_TMPDIR, else the temp dir), or ``/tmp`` when that path
    is too long for Ray's sockets inside a folder of ours."""
    base = os.environ.get("RAY_TMPDIR") or tempfile.gettempdir()
    ours = len(os.path.abspath(base)) + 1 + len(PREFIX) + 8  # mkdtemp adds 8 characters
    return base if ours + SESSION_TAIL <= SOCKET_PATH_MAX or not os.path.isdir("/tmp") else "/tmp"


@contextlib.contextmanager
def session_dir():
    """A new folder for a local Ray instance's session files, removed (whatever is in it) after."""
    path = tempfile.mkdtemp(prefix=PREFIX, dir=session_base())
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


__all__ = ["CONNECT_S", "check_address", "parse", "ray_errors", "session_base", "session_dir"]
