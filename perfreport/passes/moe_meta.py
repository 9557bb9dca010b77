"""Pass "MoE shapes": sizes ``vllm::moe_forward`` needs but does not take as arguments.

``vllm::moe_forward(hidden_states, router_logits, layer_name)`` looks its expert weights up
from the layer; the trace shows them only inside the op: views of the expert weights (``aten::view`` of ``[E, *, *]`` tensors, E = router_logits' last dim;
packed MXFP4 / FP8 weights appear as ``unsigned char``) or a child ``fused_experts`` op
taking them. From ``--model-config`` (a Hugging Face ``config.json``) it copies top-k,
expert count, expert intermediate size and the weight format (``quantization_config``).

Top-k comes from its routing ops: pass "MoE top-k" (passes/moe_top_k.py).

Writes on each such op (only what it found):

* ``moe_expert_weights``: ``((w1 shape, dtype), (w2 shape, dtype), extra bytes per expert)``:
  the two largest distinct ``[E, *, *]`` tensors under the op (gate/up first, as they are
  used first) and the per-expert bytes of smaller ``[E, *, *]`` tensors there (scales);
  under expert parallelism the views hold E_l < E experts: then the largest first dim
  e < E with two such tensors showing H (or H/2, packed 4-bit) is taken as the local weights;
* ``moe_config``: ``{top_k, num_experts, intermediate_size, weight_format}`` from the
  model config; ``weight_format`` from ``quantization_config.quant_method`` (``mxfp4``,
  ``fp8``), else from kernel names under the op (``...mxfp4...``), else the hidden
  states' dtype when the config has no quantization (unquantized weights are stored at the
  model dtype).

On the other ops whose model declares ``moe_config`` (the fused-experts ops that take the
(local) weights as arguments, :func:`perfreport.passes.ops_needing`) it writes only
``moe_config = {num_experts}`` from the model config: their global expert count when neither
``expert_map`` nor ``expert_mask`` is recorded (models/moe/ep.py).

Returns at once on traces without these ops.
"""

from __future__ import annotations

from perfreport.errors import ModelError
from perfreport.events import CPU_OP
from perfreport.passes import ops_needing, register_pass

MOE_OPS = ("vllm::moe_forward", "vllm::moe_forward_shared")
_PRECISION = {"c10::BFloat16": "bf16", "c10::Half": "fp16", "float": "fp32"}


def _expert_tensors(op, E: int, H: int | None = None):
    """Distinct (shape, dtype) of 3-d tensors under ``op`` whose first dim is E, in first-use
    order; when there are fewer than two (expert parallelism: the weights hold E_l < E
    experts), those of the largest first dim e < E with at least two such tensors having H or
    H/2 (packed 4-bit) among their other dims -- the local expert weights."""
    groups: dict = {}
    for o in op.walk():
        if o is op or o.cat != CPU_OP:
            continue
        a = o.args
        dims, types = a.get("Input Dims") or [], a.get("Input type") or []
        for d, t in zip(dims, types):
            if isinstance(d, list) and len(d) == 3 and all(isinstance(x, int) for x in d) and 0 < d[0] <= E:
                groups.setdefault(d[0], {}).setdefault((tuple(d), t), None)
    if len(groups.get(E, ())) >= 2 or not H:
        return list(groups.get(E, ()))
    for e in sorted(groups, reverse=True):
        ts = [st for st in groups[e] if H in st[0][1:] or (H % 2 == 0 and H // 2 in st[0][1:])]
        if e < E and len(ts) >= 2:
            return list(groups[e])
    return []


def _nbytes(shape, dtype) -> float:
    from perfreport.models.dtypes import bytes_per_element

    n = 1
    for x in shape:
        n *= x
    return n * bytes_per_element(dtype)


def _format_from_config(cfg) -> str | None:
    q = cfg.quantization or {}
    m = str(q.get("quant_method") or q.get("quant_algo") or "").lower()
    if "mxfp4" in m:
        return "mxfp4"
    if "fp8" in m:
        return "fp8"
    return None if q else ""


@register_pass("MoE shapes", writes=("moe_expert_weights", "moe_config"), order=30)
def annotate_moe(tree) -> None:
    cfg = tree.model_config
    if cfg is not None and cfg.num_experts:
        # the global expert count under expert parallelism, for every other op whose model
        # asks for moe_config (the fused-experts family of the registry, --models ones too)
        for op in ops_needing(tree, "moe_config"):
            if op.name not in MOE_OPS:
                op.set_meta("moe_config", {"num_experts": cfg.num_experts})
    ops = [o for n in MOE_OPS for o in tree.ops_named(n)]
    if not ops:
        return
    for op in ops:
        dims = op.args.get("Input Dims") or []
        E = dims[1][-1] if len(dims) > 1 and isinstance(dims[1], list) and dims[1] else None
        if E:
            H = dims[0][-1] if dims and isinstance(dims[0], list) and dims[0] else None
            found = _expert_tensors(op, E, H)
            try:
                ts = sorted(found, key=lambda st: -_nbytes(*st))
            except ModelError:  # unknown dtype: leave it to the model / config
                ts = []
            if len(ts) >= 2:
                w = sorted(ts[:2], key=found.index)
                extra = sum(_nbytes(*st) for st in ts[2:]) / w[0][0][0]
                op.set_meta("moe_expert_weights", (w[0], w[1], extra))
        fmt = None
        kernels = " ".join(g.name for g in op.subtree_kernels()).lower()
        if cfg is not None:
            fmt = _format_from_config(cfg)
            if fmt == "":
                types = op.args.get("Input type") or []
                fmt = _PRECISION.get(types[0]) if types else None
        if not fmt and "mxfp4" in kernels:
            fmt = "mxfp4"
        mc = {}
        if cfg is not None:
            mc = {
                "top_k": cfg.num_experts_per_tok,
                "num_experts": cfg.num_experts,
                "intermediate_size": cfg.expert_intermediate_size,
            }
        if fmt:
            mc["weight_format"] = fmt
        mc = {key: v for key, v in mc.items() if v}
        if mc:
            op.set_meta("moe_config", mc)


__all__ = ["annotate_moe", "MOE_OPS"]
