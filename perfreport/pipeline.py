"""The analyze pipeline: read -> tree -> passes. Tables and writers are driven by the CLI."""
from __future__ import annotations

from typing import Callable

from perfreport.passes import run_passes
from perfreport.read import read_trace
from perfreport.tree import TraceTree, build_tree


def load_tree(spec: str, *, keep_python: bool = False, passes: bool = True,
              graph_capture: str | None = None,
              on_progress: Callable[[int], None] | None = None) -> TraceTree:
    """Read ``spec`` (path or ``-``), build the tree, merge a graph-capture trace, run passes."""
    raw = read_trace(spec, keep_python=keep_python, on_progress=on_progress)
    tree = build_tree(raw)
    tree.graph_capture_summary = None
    if graph_capture:
        from perfreport.tree.graph_capture import apply_capture_option
        tree.graph_capture_summary = apply_capture_option(tree, graph_capture)
    if passes:
        run_passes(tree)
    return tree
