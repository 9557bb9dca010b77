"""``--ray-address``: checked and reached within a time limit before Ray is asked.

``ray.init(address=...)`` retries an unreachable head until it is killed and raises a
traceback-worthy ``ValueError`` on a malformed address. Here the address must be ``auto``,
``local``, ``HOST:PORT`` or ``ray://HOST:PORT`` (the forms ``ray.init`` documents), the head's
port must accept a TCP connection within :data:`CONNECT_S` seconds, and any error Ray raises
afterwards becomes one :class:`~perfreport.errors.BadInput` line (exit 2).
"""

from __future__ import annotations

import contextlib
import socket

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


__all__ = ["CONNECT_S", "check_address", "parse", "ray_errors"]
