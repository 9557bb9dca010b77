"""Pass "MoE top-k": k (experts per token) for the MoE ops whose arguments do not show it.

``vllm::moe_forward(hidden_states [T, H], router_logits [T, E], layer_name)`` takes no k, and
aiter's ``fmoe*`` take it as an int that a trace without ``Concrete Inputs`` does not hold. The
routing ops around them do: they take or produce the ``[T, k]`` top-k weights / ids, or take k
as an int. Every op whose model declares ``moe_top_k`` in ``needs``
(:func:`perfreport.passes.ops_needing`) gets, from the routing ops under it, else from those
before it under the same parent (its siblings since the previous such op: SGLang and aiter
route outside the experts op):

* ``moe_top_k``: int, when every routing op read agrees;
* ``moe_top_k_source``: the op and argument it came from, or, when none shows k or two
  disagree, what was found (the model then refuses with that reason).

A ``[T, k]`` tensor counts only with T = the op's tokens (rows of its hidden states), an int
only on a routing op whose input is the op's ``[T, E]`` router logits where it takes them
(``aten::topk`` only then: DeepSeek's grouped routing also takes a top-k of ``[T, groups]``
scores), and 0 < k <= E where E is known. A fused-experts op's topk_ids win over the routing
ops (they are the pairs its GEMMs run; shared experts fused as extra columns make them wider);
two values at one level are refused. The routing ops and the argument read (positional, as traces
record them; sources in the models that own them):

* ``TopK(x [T, E], k, apply_softmax, dim, return_bitmatrix, y_indx, n_rows)``: k at 1
  (triton_kernels ``topk.py``, :class:`perfreport.models.moe.routing.TritonTopK`);
* ``aten::topk(self [T, E], k, dim, largest, sorted)``: k at 1 (PyTorch
  ``native_functions.yaml``);
* ``SortTokens(expt_scal [T, k], expt_indx [T, k], n_expts_tot, bitmatrix)``: argument 0
  (triton_kernels ``routing.py``);
* ``_moe_C::topk_softmax(topk_weights [T, k], topk_indices, token_expert_indices,
  gating_output [T, E], ...)``, ``aiter::topk_softmax``, ``vllm::rocm_aiter_topk_softmax``,
  ``sgl_kernel::topk_softmax(topk_weights, topk_ids, gating_output, ...)``: argument 0 (vLLM
  ``csrc/moe/torch_bindings.cpp``);
* ``_moe_C::moe_align_block_size(topk_ids [T, k], ...)``, ``sgl_kernel::moe_align_block_size``,
  ``aiter::moe_align_block_size``, ``aiter::moe_sorting_fwd(topk_ids, topk_weights, ...)``:
  argument 0;
* the fused-experts ops ``(hidden_states, w1, w2, topk_weights [T, k], topk_ids [T, k], ...)``:
  argument 4 (:class:`perfreport.models.moe.experts.FusedExperts`).

An op with no such neighbour keeps no ``moe_top_k``: k truly is not in the trace.
"""

from __future__ import annotations

from perfreport.events import CPU_OP
from perfreport.passes import ops_needing, register_pass

# routing op -> ("int", position of k) or ("tk", position of a [T, k] tensor)
_TK0 = ("tk", 0)
ROUTING_K: dict[str, tuple[str, int]] = {
    "TopK": ("int", 1),
    "aten::topk": ("int", 1),
    "SortTokens": _TK0,
    "_moe_C::topk_softmax": _TK0,
    "aiter::topk_softmax": _TK0,
    "vllm::rocm_aiter_topk_softmax": _TK0,
    "sgl_kernel::topk_softmax": _TK0,
    "_moe_C::moe_align_block_size": _TK0,
    "sgl_kernel::moe_align_block_size": _TK0,
    "aiter::moe_align_block_size": _TK0,
    "aiter::moe_sorting_fwd": _TK0,
    "vllm::inplace_fused_experts": ("tk", 4),
    "vllm::outplace_fused_experts": ("tk", 4),
    "sglang::inplace_fused_experts": ("tk", 4),
    "sglang::outplace_fused_experts": ("tk", 4),
    "aiter::fused_moe_": ("tk", 4),
    "vllm::rocm_aiter_fused_moe": ("tk", 4),
}


def _dims(o) -> list:
    d = o.args.get("Input Dims")
    return d if isinstance(d, list) else []


def _tokens_experts(op) -> tuple[int | None, list | None]:
    """(T, router logits shape [T, E] or None) of a MoE op: ``vllm::moe_forward`` takes
    (hidden_states, router_logits, ...), aiter ``fmoe*`` (out, input, ...), the CK stages
    (hidden_states / inter_states [T, ...], ...)."""
    d = _dims(op)
    first = 1 if op.name.startswith("aiter::fmoe") else 0
    x = d[first] if len(d) > first and isinstance(d[first], list) and d[first] else None
    logits = d[1] if op.name.startswith("vllm::moe_forward") and len(d) > 1 and isinstance(d[1], list) else None
    if logits is not None and len(logits) != 2:
        logits = None
    return (x[0] if x else None), logits


def read_k(o, T: int | None, logits: list | None) -> int | None:
    """k from one routing op ``o`` (see :data:`ROUTING_K`), or None."""
    form = ROUTING_K.get(o.name)
    if form is None or T is None:
        return None
    kind, i = form
    d = _dims(o)
    if kind == "tk":
        s = d[i] if i < len(d) else None
        if isinstance(s, list) and len(s) == 2 and s[0] == T and isinstance(s[1], int) and s[1] > 0:
            k = s[1]
        else:
            return None
    else:
        x = d[0] if d else None
        if not (isinstance(x, list) and len(x) == 2 and x[0] == T) or (logits is not None and x != logits):
            return None
        if logits is None and o.name == "aten::topk":
            return None  # a generic op: routing only on the op's own router logits
        ci = o.args.get("Concrete Inputs") or []
        v = str(ci[i]).strip() if i < len(ci) else ""
        if not v.isdigit() or int(v) <= 0:
            return None
        k = int(v)
    return k if logits is None or k <= logits[1] else None


def _neighbours(op) -> list:
    """The op's descendants, then its siblings before it back to the previous op of its name."""
    below = [o for o in op.walk() if o is not op and o.cat == CPU_OP]
    before = []
    sibs = op.parent.children if op.parent is not None and op.parent.children else []
    for s in sibs:
        if s is op:
            break
        if s.name == op.name:
            before = []
        else:
            before.extend(o for o in s.walk() if o.cat == CPU_OP)
    return [below, before]


def _experts_op(name: str) -> bool:
    """A fused-experts op: its topk_ids are the (token, expert) pairs its GEMMs run."""
    return ROUTING_K.get(name) == ("tk", 4)


def top_k(op) -> tuple[int | None, str]:
    """(k, where it came from) or (None, why not) for one MoE op.

    Within a group (under the op, then before it) a fused-experts op's topk_ids win over the
    routing ops: they are the pairs the expert GEMMs run (vLLM / aiter fuse shared experts
    as extra topk_ids columns, so they may exceed the router's k; the row says so). Two
    values at the same level are refused."""
    T, logits = _tokens_experts(op)
    for where, group in zip(("under the op", "before it under the same parent"), _neighbours(op)):
        tiers: tuple[dict, dict] = ({}, {})  # fused-experts topk_ids, routing ops
        for o in group:
            k = read_k(o, T, logits)
            if k is not None:
                kind, i = ROUTING_K[o.name]
                text = f"{o.name} {'argument' if kind == 'int' else '[T, k] argument'} {i}"
                tiers[0 if _experts_op(o.name) else 1].setdefault(k, text)
        for n, found in enumerate(tiers):
            if len(found) == 1:
                ((k, src),) = found.items()
                other = tiers[1] if n == 0 else {}
                extra = ""
                if set(other) - {k}:
                    extra = "; routing ops show " + ", ".join(f"{x} ({s})" for x, s in sorted(other.items()))
                return k, f"{src} ({where}){extra}"
            if len(found) > 1:
                seen = ", ".join(f"{k} from {s}" for k, s in sorted(found.items()))
                return None, f"routing ops {where} disagree: {seen}"
    return None, (
        f"no routing op (TopK, SortTokens, topk_softmax, moe_align / moe_sorting, fused_experts) under "
        f"it or before it shows k: no [{T}, k] tensor, no k argument"
    )


@register_pass("MoE top-k", writes=("moe_top_k", "moe_top_k_source"), order=30)
def annotate_top_k(tree) -> None:
    for op in ops_needing(tree, "moe_top_k"):
        k, source = top_k(op)
        if k:
            op.set_meta("moe_top_k", k)
        op.set_meta("moe_top_k_source", source)


__all__ = ["annotate_top_k", "top_k", "read_k", "ROUTING_K"]
