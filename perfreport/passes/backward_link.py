"""Pass "backward link": autograd backward nodes -> the forward op that created them.

Forward ops and the backward node they create share a ``Sequence number``. For each backward
node (``XBackward0`` and friends) whose forward op has a model with a backward rule
(:func:`perfreport.models.backward.has_backward_rule`), writes
``perf_meta["forward"] = {"name", "args", "uid"}`` on the node. Returns at once on traces with
no sequence numbers (inference traces).
"""

from __future__ import annotations

import re

from perfreport.events import CPU_OP
from perfreport.passes import register_pass

_BWD = re.compile(r"[A-Za-z0-9_:]*Backward\d*")


def _is_backward(name: str) -> bool:
    return name.startswith("autograd::engine") or _BWD.fullmatch(name) is not None or "backward" in name


def node_names(names) -> set:
    """The names among ``names`` that are autograd backward nodes this pass may link
    (``XBackward0``; not the ``autograd::engine`` wrappers): the only ops it writes on."""
    return {n for n in names if _BWD.fullmatch(n) and not n.startswith("autograd::engine")}


@register_pass("backward link", writes=("forward",), order=30)
def link_backward(tree) -> None:
    from perfreport.models.backward import has_backward_rule
    from perfreport.models.registry import model_for

    # names first (one registry lookup a distinct name), then only the ops of those names: an
    # op's ``seq`` is a column read, ~0.6 µs a call over every op of the trace (0.02 CPU s at
    # 105 MB for an inference trace that has none)
    names = tree.op_names()
    forward = {n for n in names if not _is_backward(n) and has_backward_rule(model_for(n))}
    nodes = node_names(names)
    if not forward or not nodes:
        return
    fwd: dict = {}
    for o in tree.ops:  # ts order: the innermost modelled forward op wins
        if o.name in forward and o.cat == CPU_OP and o.seq is not None:
            fwd[o.seq] = o
    if not fwd:
        return
    for o in tree.ops:
        if o.name in nodes and o.cat == CPU_OP and o.seq is not None:
            f = fwd.get(o.seq)
            if f is not None:
                o.set_meta("forward", {"name": f.name, "args": f.args, "uid": f.uid})
