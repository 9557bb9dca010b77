"""Pass "attention layers": each attention call's decoder-layer index and sliding window.

A layer name among the op's Concrete Inputs (``model.layers.<i>.``) gives the index directly.
Serving traces usually do not record one (the profiler leaves ``str`` arguments such as
vLLM's ``layer_name`` empty), but a step runs the layers in order: the k-th call of one op
name inside one iteration annotation (ops outside any annotation: the k-th in the trace) is
layer k. Runs only with ``--model-config`` (:attr:`TraceTree.model_config`); with L =
``num_hidden_layers``, a step holding a multiple of L calls maps call k to layer k mod L
(several forward passes in one step, e.g. speculative decoding); a step whose count is no
multiple of L gets no layer index (the mapping would be a guess).

Writes, for every op whose model declares them in ``needs``:

* ``perf_meta["layer_index"]``: that layer (0-based);
* ``perf_meta["sliding_window"]``: with a model config, the layer's window in keys
  (:meth:`ModelConfig.layer_window`: ``layer_types`` / ``sliding_window``), 0 for a full
  attention layer.
Without a config nothing is written and models charge the full context unless the op's own
arguments carry a window.
"""

from __future__ import annotations

import re
from collections import defaultdict

from perfreport.passes import ops_needing, register_pass
from perfreport.passes.iteration_annotations import containing, iteration_annotations


_LAYER_NAME = re.compile(r"(?:^|\.)layers?\.(\d+)\.")


def named_layer(op) -> int | None:
    """The layer index in a recorded layer name (``model.layers.3.self_attn.attn``), if any."""
    for v in op.args.get("Concrete Inputs") or ():
        if isinstance(v, str) and "layer" in v:
            m = _LAYER_NAME.search(v.strip("'\""))
            if m:
                return int(m.group(1))
    return None


def layer_positions(tree, ops: list) -> dict[int, tuple[int, int]]:
    """id(op) -> (position among the same-named ops of its step, their count)."""
    step_of: dict[int, int] = {}
    anns = iteration_annotations(tree)
    if anns:
        for op, ann, _ in containing(anns, ops):
            step_of[id(op)] = ann.uid
    groups: dict = defaultdict(list)
    for o in ops:
        groups[(step_of.get(id(o)), o.name)].append(o)
    out = {}
    for members in groups.values():
        members.sort(key=lambda o: o.ts)
        for k, o in enumerate(members):
            out[id(o)] = (k, len(members))
    return out


@register_pass("attention layers", writes=("layer_index", "sliding_window"), order=15)
def attention_layers(tree) -> None:
    cfg = getattr(tree, "model_config", None)
    if cfg is None:
        return
    ops = ops_needing(tree, "layer_index")
    if not ops:
        return
    n_layers = cfg.num_hidden_layers
    pos = layer_positions(tree, ops)
    for o in ops:
        k = named_layer(o)
        if k is None:
            k, n = pos[id(o)]
            if n_layers:
                if n % n_layers:
                    continue
                k %= n_layers
        o.set_meta("layer_index", k)
        if "sliding_window" in getattr(_model(o), "needs", ()):
            o.set_meta("sliding_window", cfg.layer_window(k) or 0)


def _model(op):
    from perfreport.models.registry import model_for

    return model_for(op.name)


__all__ = ["attention_layers", "layer_positions"]
