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


@register_pass("backward link", writes=("forward",), order=30)
def link_backward(tree) -> None:
    from perfreport.models.backward import has_backward_rule
    from perfreport.models.registry import model_for

    seq_ops = [o for o in tree.ops if o.seq is not None and o.cat == CPU_OP]
    if not seq_ops:
        return
    fwd: dict = {}
    for o in seq_ops:  # ts order: the innermost modelled forward op wins
        if _is_backward(o.name):
            continue
        if has_backward_rule(model_for(o.name)):
            fwd[o.seq] = o
    if not fwd:
        return
    for o in seq_ops:
        if _BWD.fullmatch(o.name) and not o.name.startswith("autograd::engine"):
            f = fwd.get(o.seq)
            if f is not None:
                o.set_meta("forward", {"name": f.name, "args": f.args, "uid": f.uid})
