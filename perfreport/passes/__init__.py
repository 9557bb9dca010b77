"""Passes: annotate the tree before the models run.

A pass is a function ``fn(tree) -> None`` registered with :func:`register_pass`, which
declares the ``perf_meta`` keys it may write. Every module in this package is imported
once by :func:`run_passes`, so adding a pass is adding a module. A pass reads the tree and
writes only its declared keys (through ``Op.set_meta``); it returns at once on traces that
do not hold the ops it cares about.
"""
from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass
from typing import Callable


@dataclass(frozen=True)
class Pass:
    name: str
    writes: tuple[str, ...]
    fn: Callable
    order: int


PASSES: list[Pass] = []
_loaded = False


def register_pass(name: str, writes: tuple[str, ...], order: int = 100):
    def deco(fn):
        PASSES.append(Pass(name, tuple(writes), fn, order))
        return fn
    return deco


def _load_all() -> None:
    global _loaded
    if _loaded:
        return
    for m in pkgutil.iter_modules(__path__):
        importlib.import_module(f"{__name__}.{m.name}")
    _loaded = True


def run_passes(tree) -> list[str]:
    """Run every registered pass in ``order``; returns the names of the passes run."""
    _load_all()
    ran = []
    for p in sorted(PASSES, key=lambda p: (p.order, p.name)):
        p.fn(tree)
        ran.append(p.name)
    return ran
