"""Passes for paged-attention leaf ops that matter to their parents' perf models.

* "paged-attn-v1 parents": ``aiter::paged_attention_v1`` is the granular leaf under
  ``vllm::unified_attention_with_output``, and both have models. Every ``cpu_op``
  ancestor of the leaf gets ``perf_meta["exclude_perf_model"] = True`` so the unified
  table reaches the leaf instead of stopping at the parent.
* "KV-cache dtype": the ops that take the cache tensor are the only ones that see its dtype
  (``vllm::unified_attention_with_output`` sees only the BF16 new-token K/V). The key cache's
  ``Input type`` of each such op is copied to every ``cpu_op`` ancestor as
  ``perf_meta["KCache_dtype"]`` (the one KV-cache dtype the models read), with
  ``perf_meta["KCache_source"]`` naming the op and argument. The ops (positional, as traces
  record them):

  * ``_rocm_C::paged_attention(out, exp_sums, max_logits, tmp_out, query, key_cache,
    value_cache, ...)``: key_cache at 5 (vLLM ``csrc/rocm/torch_bindings.cpp``); it has no
    model, its parent carries the row;
  * ``_C_cache_ops::reshape_and_cache(key, value, key_cache, value_cache, slot_mapping,
    kv_cache_dtype, k_scale, v_scale)`` and ``reshape_and_cache_flash`` (same order): key_cache
    at 2 (vLLM ``csrc/torch_bindings.cpp``): the cache write inside the attention op where the
    backend's forward does it (vLLM before the separate ``unified_kv_cache_update`` op).

  ``kv_cache_dtype`` is a ``str`` argument, which the profiler records as ``''``, and
  ``k_scale``/``v_scale`` are passed for every cache dtype, so neither decides: the tensor's
  dtype does (FP8 caches are ``uint8`` in vLLM, ``float8_e4m3fnuz`` in some ROCm paths).

Both return at once on traces without their ops.
"""

from __future__ import annotations

from perfreport.passes import register_pass
from perfreport.events import CPU_OP

AITER_PA_V1 = "aiter::paged_attention_v1"
ROCM_PA = "_rocm_C::paged_attention"
ROCM_K_CACHE_ARG = 5
NOT_TENSORS = ("", "Scalar", "ScalarList", "TensorList", "GenericList")
# op that takes the KV cache -> position of its key_cache argument (module doc)
CACHE_OPS = {
    ROCM_PA: ROCM_K_CACHE_ARG,
    "_C_cache_ops::reshape_and_cache": 2,
    "_C_cache_ops::reshape_and_cache_flash": 2,
}


@register_pass("paged-attn-v1 parents", writes=("exclude_perf_model",), order=20)
def mark_paged_attn_v1_parents(tree) -> None:
    leaves = tree.ops_named(AITER_PA_V1)
    if not leaves:
        return
    for leaf in leaves:
        for anc in leaf.ancestors():
            if anc.cat == CPU_OP:
                anc.set_meta("exclude_perf_model", True)


@register_pass("KV-cache dtype", writes=("KCache_dtype", "KCache_source"), order=20)
def mark_kv_cache_dtype(tree) -> None:
    for name, pos in CACHE_OPS.items():
        for leaf in tree.ops_named(name):
            types = leaf.args.get("Input type")
            if not isinstance(types, list) or len(types) <= pos or types[pos] in NOT_TENSORS:
                continue  # recorded without shapes: nothing to propagate
            source = f"key_cache of {name} (argument {pos}) under this op"
            for anc in leaf.ancestors():
                if anc.cat == CPU_OP:
                    anc.set_meta("KCache_dtype", types[pos])
                    anc.set_meta("KCache_source", source)


__all__ = ["mark_paged_attn_v1_parents", "mark_kv_cache_dtype"]
