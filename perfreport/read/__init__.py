"""Stage 1: read a Kineto trace into compact records (never the whole parsed document).

Public surface: :func:`read_trace` -> :class:`RawTrace`.
"""

from __future__ import annotations

import functools
import gc
import msgspec
from msgspec import field
from typing import Callable, Iterator

from perfreport.errors import BadInput
from perfreport.read import heap
from perfreport.read.kineto import Collector
from perfreport.read.schema import EVENT_DECODER
from perfreport.read.meta import check_meta
from perfreport.read.source import Source
from perfreport.read.splitter import Split, iter_batches


class RawTrace(msgspec.Struct, dict=True):
    """What the reader hands to :func:`perfreport.tree.build_tree`.

    ``records`` is a :class:`~perfreport.read.kineto.Collector`: typed columns, not one object
    per event. ``build_tree`` consumes it (frees its CPU columns), so build one tree per read.
    """

    source: str
    meta: dict
    records: Collector
    size: int | None = None
    warnings: list[str] = field(default_factory=list)
    sha256: str | None = None  # of the input's bytes as stored (None if not read to its end)


def read_trace(
    spec: str,
    *,
    keep_python: bool = False,
    launch_kernels: bool = False,
    on_progress: Callable[[int], None] | None = None,
) -> RawTrace:
    """Stream ``spec`` (path or ``-``) and collect the events the report uses.

    ``launch_kernels`` also keeps the kernel name a launch call records in its args
    (``records.launch_kernels``: correlation -> (call name, kernel)), which a graph-capture
    trace needs to match graph nodes; the same single pass reads it."""
    src = Source(spec)
    split = Split()
    col = Collector(src.name, keep_python=keep_python, launch_kernels=launch_kernels)
    gc_was = gc.isenabled()
    gc.disable()  # millions of small acyclic records: the cyclic GC only costs time here
    try:
        chunks = _tuning(src.chunks(on_progress))
        direct = functools.partial(col.add_doc, bare=True)  # the batches' bytes to the C loop first
        for batch in iter_batches(chunks, EVENT_DECODER, src.name, split, direct=direct):
            col.add(batch)
    finally:
        if gc_was:
            gc.enable()
    if col.n_events == 0:
        raise BadInput(src.name, "traceEvents is empty")
    split.repairs.update(col.repairs)
    warnings = split.warnings() + check_meta(split.meta)
    return RawTrace(src.name, split.meta, col, src.size, warnings, src.sha256)


def _tuning(chunks: Iterator[bytes]) -> Iterator[bytes]:
    """The chunks; once :data:`heap.BIG` bytes have passed, :func:`heap.tune` (big arrays
    mmapped, so freeing them lowers the RSS; glibc). A small trace never loads libc for it."""
    seen = 0
    for c in chunks:
        if seen <= heap.BIG:
            seen += len(c)
            if seen > heap.BIG:
                heap.tune()
        yield c


__all__ = ["read_trace", "RawTrace", "Source"]
