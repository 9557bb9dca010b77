"""Pass "sharding": the tensor-parallel degree of this rank, from the trace's own shapes.

``--model-config`` gives a model's global sizes; a rank of a tensor-parallel run holds a
slice of them. Attention shards by heads (Megatron-style column parallelism, as vLLM's
``QKVParallelLinear`` and SGLang's do): a TP-``t`` rank runs ``num_attention_heads / t`` query
heads and ``num_key_value_heads / t`` KV heads, one replicated KV head when ``t`` exceeds the
KV heads. So with the config's global counts, every serving-attention op (those whose model
reads chunk statistics) gives ``t = num_attention_heads / H_Q`` (its query head count in the
trace), checked against its KV heads. Only one consistent integer ``t`` is taken; anything
else (fractional ratios, ops that disagree) infers nothing and says why.

Writes ``perf_meta["sharding"] = {"tp": t, "evidence": text}`` on every op whose model
declares ``"sharding"`` in ``needs`` (the MoE models: with the config's expert intermediate
size they use ``intermediate / t`` per rank), and :attr:`TraceTree.sharding` (the line the
report's notes carry). Runs only with a model config; expert parallelism is read from the
expert weights themselves (models/moe/ep.py), not here.
"""

from __future__ import annotations

from collections import Counter

from perfreport.passes import ops_needing, register_pass


def _heads(op) -> tuple[int, int | None] | None:
    """(query heads, KV heads or None for a shared latent) of one attention op, or None."""
    from perfreport.errors import ModelError
    from perfreport.models.registry import model_for

    cls = model_for(op.name)
    if cls is None:
        return None
    try:
        m = cls(op)
        hq, hkv = getattr(m, "H_Q", None), getattr(m, "H_KV", None)
    except ModelError:
        read = getattr(cls, "read_shapes", None)
        if read is None:
            return None
        probe = object.__new__(cls)  # shapes only: the chunk statistics may be unknown
        probe.op = op
        try:
            shp = read(probe)
        except (ModelError, AttributeError, KeyError, TypeError, IndexError):
            return None
        hq, hkv = shp.get("H_Q"), shp.get("H_KV")
    if not isinstance(hq, int) or hq <= 0:
        return None
    if getattr(cls, "shared_kv_latent", False) or not isinstance(hkv, int):
        hkv = None
    return hq, hkv


def infer_tp(tree) -> tuple[int | None, str]:
    """(tensor-parallel degree or None, the evidence or the reason none was inferred)."""
    cfg = tree.model_config
    if cfg is None or not cfg.num_attention_heads:
        return None, "model config has no num_attention_heads"
    seen: Counter = Counter()
    for op in ops_needing(tree, "iteration"):
        h = _heads(op)
        if h is not None:
            seen[(op.name, h)] += 1
    if not seen:
        return None, "no serving-attention op with recorded head counts"
    H, KV = cfg.num_attention_heads, cfg.num_key_value_heads
    tps = set()
    for (name, (hq, hkv)), n in seen.items():
        if H % hq:
            return None, f"{name}: {hq} query heads do not divide the config's {H}"
        t = H // hq
        if hkv is not None and KV:
            want = KV // t if KV >= t else 1
            if (KV >= t and KV % t) or hkv != want:
                return None, f"{name}: {hkv} KV heads, {want} expected at TP {t} of the config's {KV}"
        tps.add(t)
    if len(tps) != 1:
        return None, f"attention ops disagree on the tensor-parallel degree ({', '.join(map(str, sorted(tps)))})"
    (t,) = tps
    parts = []
    for (name, (hq, hkv)), n in sorted(seen.items()):
        kv = f", {hkv} of {KV} KV heads" if hkv is not None and KV else ""
        parts.append(f"{hq} of {H} query heads{kv} ({name} ×{n})")
    return t, f"tensor parallelism {t} inferred from " + "; ".join(parts)


@register_pass("sharding", writes=("sharding",), order=25)
def annotate_sharding(tree) -> None:
    if tree.model_config is None:
        return
    targets = ops_needing(tree, "sharding")
    t, text = infer_tp(tree)
    if t is None:
        if targets:  # a row that would use the config's sizes: say why they stay global
            tree.sharding = (
                f"tensor parallelism not inferred ({text}): sizes a row takes from the model config are used unsharded"
            )
        return
    tree.sharding = text
    for op in targets:
        op.set_meta("sharding", {"tp": t, "evidence": text})


__all__ = ["annotate_sharding", "infer_tp"]
