"""The CPU-op tree with GPU events linked to the runtime calls that launched them.

Public surface: :class:`TraceTree`, :class:`Op`, :class:`GpuEvent`, :func:`build_tree`.
"""

from __future__ import annotations

from perfreport.events import (
    CPU_OP,
    DRIVER,
    GPU_ANNOTATION,
    KERNEL,
    MEMCPY,
    MEMSET,
    PYTHON,
    RUNTIME,
    USER_ANNOTATION,
    GpuEvent,
    Op,
)
from perfreport.tree.trace_tree import TraceTree
from perfreport.tree.build import build_tree

__all__ = [
    "TraceTree",
    "Op",
    "GpuEvent",
    "build_tree",
    "CPU_OP",
    "USER_ANNOTATION",
    "RUNTIME",
    "DRIVER",
    "PYTHON",
    "KERNEL",
    "MEMCPY",
    "MEMSET",
    "GPU_ANNOTATION",
]
