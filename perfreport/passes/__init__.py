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
import msgspec
from typing import Callable


class Pass(msgspec.Struct, frozen=True):
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


def ops_needing(tree, key: str, extra=frozenset()) -> list:
    """The ``cpu_op`` events whose perf model declares ``key`` in ``needs`` (see
    :class:`perfreport.models.base.PerfModel`), plus those named in ``extra``, by time.

    This is how a pass serves models it does not know, out-of-tree ``--models`` ones
    included: a model asks for a pass output by naming it.
    """
    from perfreport.events import CPU_OP

    needs = _needs_by_name(tree)
    want = [n for n in tree.op_names() if n in extra or key in needs.get(n, ())]
    if not want:  # (most keys on most traces: no pass over the ops)
        return []
    if len(want) == 1:  # the by-name index keeps the order of tree.ops
        return [o for o in tree.ops_named(want[0]) if o.cat == CPU_OP]
    wanted = set(want)
    return [o for o in tree.ops if o.name in wanted and o.cat == CPU_OP]


# while run_passes runs (no pass adds or drops ops): [the tree, {op name: the needs of its model}]
_NEEDS: list = []


def _needs_by_name(tree) -> dict:
    """``{name: needs}`` of the names of the tree's cpu_ops that have a model: looked up once
    per :func:`run_passes` (a regex search per distinct name: ~0.05 CPU s at 105 MB, and every
    pass asks), else each call."""
    from perfreport.events import CPU_OP
    from perfreport.models.registry import model_for

    if _NEEDS and _NEEDS[0] is tree and _NEEDS[1] is not None:
        return _NEEDS[1]
    out = {}
    for n in tree.op_names():
        if any(o.cat == CPU_OP for o in tree.ops_named(n)):
            cls = model_for(n)
            if cls is not None:
                out[n] = getattr(cls, "needs", ())
    if _NEEDS and _NEEDS[0] is tree:
        _NEEDS[1] = out
    return out


def written_keys() -> set[str]:
    """Every ``perf_meta`` key some registered pass declares it writes."""
    _load_all()
    return {k for p in PASSES for k in p.writes}


def _load_all() -> None:
    global _loaded
    if _loaded:
        return
    for m in pkgutil.iter_modules(__path__):
        importlib.import_module(f"{__name__}.{m.name}")
    _loaded = True


def run_passes(tree) -> list[str]:
    """Run every registered pass in ``order``; returns the names of the passes run. The tree's
    by-name index is dropped after them."""
    _load_all()
    ran = []
    _NEEDS[:] = [tree, None]
    try:
        for p in sorted(PASSES, key=lambda p: (p.order, p.name)):
            p.fn(tree)
            ran.append(p.name)
    finally:
        _NEEDS.clear()
        # the by-name index is the passes' (the tables read none of it): freed for the tables'
        # peak (a 650 MB trace: one list slot per op, ~2 MB); ops_named rebuilds it if asked
        tree.invalidate_index()
    return ran
