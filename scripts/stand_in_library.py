"""Registering stand-in custom ops with ``torch.library`` for the capture scripts.

A stand-in op is defined under the real op's namespace, name and schema and given a CPU
kernel, so a profiled call records a cpu_op with the real name and argument order. The
``Library`` objects are kept alive here: dropping one unregisters its ops. Every capture
script registers through ``define`` / ``impl``, so calling a script's ``register_ops`` twice
in one process is harmless: an op already registered here with the same kernel is skipped,
and the same op with another kernel is an error (two scripts disagreeing on a stand-in).
"""

from __future__ import annotations

import torch

# Some aten ops take another path (and record other child ops) with one intra-op thread than
# with several, so a capture depends on the machine's core count unless it is pinned. The
# committed fixtures were captured with 2 threads; every capture script imports this module.
CAPTURE_THREADS = 2
torch.set_num_threads(CAPTURE_THREADS)

_LIBS: list = []
_KERNELS: dict = {}  # (ns, op name) -> the CPU kernel registered for it


def _once(ns: str, name: str, fn) -> bool:
    """True when ``ns::name`` still needs registering; False when ``fn`` already is its kernel."""
    have = _KERNELS.get((ns, name))
    if have is None:
        _KERNELS[(ns, name)] = fn
        return True
    if have is not fn:
        raise RuntimeError(f"{ns}::{name} is already registered with another stand-in kernel")
    return False


def define(ns: str, schema: str, fn) -> None:
    """Define ``ns::schema`` (``"name(args) -> ret"``) with ``fn`` as its CPU kernel."""
    name = schema.split("(", 1)[0]
    if not _once(ns, name, fn):
        return
    lib = torch.library.Library(ns, "FRAGMENT")
    lib.define(schema)
    lib.impl(name, fn, "CPU")
    _LIBS.append(lib)


def impl(ns: str, name: str, fn) -> None:
    """A CPU kernel ``fn`` for an op torch already declares (``ns::name``, e.g. an aten schema
    that has no CPU kernel)."""
    if not _once(ns, name, fn):
        return
    lib = torch.library.Library(ns, "IMPL")
    lib.impl(name, fn, "CPU")
    _LIBS.append(lib)
