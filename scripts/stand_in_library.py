"""Registering stand-in custom ops with ``torch.library`` for the capture scripts.

A stand-in op is defined under the real op's namespace, name and schema and given a CPU
kernel, so a profiled call records a cpu_op with the real name and argument order. The
``Library`` objects are kept alive here: dropping one unregisters its ops.
"""
from __future__ import annotations

import torch

_LIBS: list = []


def define(ns: str, schema: str, fn) -> None:
    """Define ``ns::schema`` (``"name(args) -> ret"``) with ``fn`` as its CPU kernel."""
    lib = torch.library.Library(ns, "FRAGMENT")
    lib.define(schema)
    lib.impl(schema.split("(", 1)[0], fn, "CPU")
    _LIBS.append(lib)


def impl(ns: str, name: str, fn) -> None:
    """A CPU kernel ``fn`` for an op torch already declares (``ns::name``, e.g. an aten schema
    that has no CPU kernel)."""
    lib = torch.library.Library(ns, "IMPL")
    lib.impl(name, fn, "CPU")
    _LIBS.append(lib)
