"""The tree's records kept out of the cyclic collector's way while the passes and tables run.

A big tree holds millions of GC-tracked records (ops, GPU events, their dicts and lists) that
live until :meth:`~perfreport.tree.TraceTree.release`. Every full collection that the passes'
and tables' own allocations trigger walks all of them: ~0.07 of ~0.15 CPU s of collections at
105 MB, ~4% of the run at 655 MB under ``perf`` (docs/benchmarks.md, "The tree's records frozen").
:func:`gc.freeze` moves the objects alive now into the permanent generation, which the collector
skips; :func:`gc.unfreeze` puts them back into the oldest one, before ``release`` collects the
records' cycles. Nothing is frozen when something else in the process already froze objects
(unfreezing would thaw those too).
"""

from __future__ import annotations

import gc
from contextlib import contextmanager
from typing import Iterator


@contextmanager
def records_frozen() -> Iterator[bool]:
    """Freeze every object alive now for the ``with`` block; yields whether it did."""
    if gc.get_freeze_count():
        yield False
        return
    gc.freeze()
    try:
        yield True
    finally:
        gc.unfreeze()


__all__ = ["records_frozen"]
