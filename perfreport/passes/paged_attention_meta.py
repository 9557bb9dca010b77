"""Passes for paged-attention leaf ops that matter to their parents' perf models.

* "paged-attn-v1 parents": ``aiter::paged_attention_v1`` is the granular leaf under
  ``vllm::unified_attention_with_output``, and both have models. Every ``cpu_op``
  ancestor of the leaf gets ``perf_meta["exclude_perf_model"] = True`` so the unified
  table reaches the leaf instead of stopping at the parent.
* "ROCm KV-cache dtype": ``_rocm_C::paged_attention`` has no model, but it is the only op
  that sees the real cache dtype (its ``key_cache`` at position 5; the parent sees only the
  BF16 new-token K/V). Its ``Input type[5]`` is copied to every ``cpu_op`` ancestor as
  ``perf_meta["KCache_dtype"]``, the one KV-cache dtype the models read.

Both return at once on traces without their leaf op.
"""

from __future__ import annotations

from perfreport.passes import register_pass
from perfreport.events import CPU_OP

AITER_PA_V1 = "aiter::paged_attention_v1"
ROCM_PA = "_rocm_C::paged_attention"
ROCM_K_CACHE_ARG = 5


@register_pass("paged-attn-v1 parents", writes=("exclude_perf_model",), order=20)
def mark_paged_attn_v1_parents(tree) -> None:
    leaves = tree.ops_named(AITER_PA_V1)
    if not leaves:
        return
    for leaf in leaves:
        for anc in leaf.ancestors():
            if anc.cat == CPU_OP:
                anc.set_meta("exclude_perf_model", True)


@register_pass("ROCm KV-cache dtype", writes=("KCache_dtype",), order=20)
def mark_rocm_paged_attn_kvcache_dtype(tree) -> None:
    leaves = tree.ops_named(ROCM_PA)
    if not leaves:
        return
    for leaf in leaves:
        types = leaf.args.get("Input type")
        if not isinstance(types, list) or len(types) <= ROCM_K_CACHE_ARG:
            continue  # recorded without shapes: nothing to propagate
        k_dtype = types[ROCM_K_CACHE_ARG]
        for anc in leaf.ancestors():
            if anc.cat == CPU_OP and k_dtype:
                anc.set_meta("KCache_dtype", k_dtype)


__all__ = ["mark_paged_attn_v1_parents", "mark_rocm_paged_attn_kvcache_dtype"]
