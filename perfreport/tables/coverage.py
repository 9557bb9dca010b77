"""Roofline coverage of a unified perf table, and the graph-replay rows it cannot model.

* :func:`split_graph_kernels`: an op's direct kernels split into its own and those of each
  CUDA/HIP graph launch inside it, so a graph's kernels form their own row under the launch
  (``hipGraphLaunch``/``cudaGraphLaunch``) instead of disappearing into the enclosing op or
  annotation (an SGLang ``step[DECODE bs=32]`` held 99% of GPU time that way).
* :func:`graph_reason`: why such a row has no model: a replay records no shapes, so without
  the capture-time trace (``--graph-capture``) nothing can be modelled.
* :func:`coverage_note`: one line, the share of GPU time in rows with a roofline, and the
  share in graph replay rows without shapes.
"""
from __future__ import annotations

import re

from perfreport.events import DRIVER, RUNTIME

GRAPH_LAUNCH = re.compile(r"(hip|cuda|cu)GraphLaunch")
GRAPH_CATEGORY = "graph replay"
NO_CAPTURE = "graph replay without a capture trace: shapes unknown"
UNMATCHED = "graph replay kernels the capture trace did not match: shapes unknown"


def is_graph_launch(op) -> bool:
    return op is not None and op.cat in (RUNTIME, DRIVER) and GRAPH_LAUNCH.match(op.name) is not None


def split_graph_kernels(kernels):
    """(own kernels, [(graph launch op, its kernels), ...]) of one op's direct kernels."""
    own, graphs = [], {}
    for g in kernels:
        l = g.launcher
        if is_graph_launch(l):
            graphs.setdefault(id(l), (l, []))[1].append(g)
        else:
            own.append(g)
    return own, list(graphs.values())


def graph_reason(tree) -> str:
    return UNMATCHED if getattr(tree, "graph_capture", None) is not None else NO_CAPTURE


def coverage_note(rows, total: float) -> str:
    """``rows``: unified-table rows (``time sum (µs)``, ``roofline time (µs)``, category)."""
    if total <= 0:
        return "roofline coverage: no GPU time"
    covered = sum(r["time sum (µs)"] for r in rows if r.get("roofline time (µs)") is not None)
    graph = [r for r in rows if r.get("category") == GRAPH_CATEGORY]
    s = f"roofline coverage: {100.0 * covered / total:.1f}% of GPU time is in rows with a roofline"
    if graph:
        g = sum(r["time sum (µs)"] for r in graph)
        s += f"; {100.0 * g / total:.1f}% is {graph[0]['reason']}"
        if graph[0]["reason"] == NO_CAPTURE:
            s += " (give --graph-capture)"
    return s


__all__ = ["GRAPH_CATEGORY", "NO_CAPTURE", "UNMATCHED", "is_graph_launch",
           "split_graph_kernels", "graph_reason", "coverage_note"]
