"""KV-cache writes: the new tokens' K and V scattered into the paged cache (category ``KVCache``).

Bytes = the new K/V (or MLA latent) elements read at their own dtype (the compute dtype)
+ the same elements written at the CACHE dtype (FP8 caches = 1 byte, also when stored as
``uint8``) + the slot mapping read (+ scale tensors read). The caches themselves are large
arguments of which only ``T`` slots are touched: they give the dtype, never the size.
FLOPs = one per element written (the copy convention of models/elementwise.py; the FP8
paths scale and convert each element). Vector units at the new tokens' precision.

The tensors are told apart by shape, so each signature needs no positions:
the slot mapping is the 1-d integer tensor (length T), the new-token tensors are the
floating tensors whose first dimension is T, the caches are the remaining tensors of
two or more dimensions; 0-d/1-d floating tensors are scales.

Signatures (positional, as traces record them):
* ``_C_cache_ops::reshape_and_cache(key[T,Hkv,D], value[T,Hkv,D], key_cache[blocks,Hkv,D/x,
  page,x], value_cache[blocks,Hkv,D,page], slot_mapping[T], kv_cache_dtype, k_scale, v_scale)``
  and ``reshape_and_cache_flash(key, value, key_cache[blocks,page,Hkv,D], value_cache,
  slot_mapping, kv_cache_dtype, k_scale, v_scale)`` (vLLM csrc/torch_bindings.cpp);
* ``_C_cache_ops::concat_and_cache_mla(kv_c[T,L], k_pe[T,R], kv_cache[blocks,page,L+R],
  slot_mapping, kv_cache_dtype, scale)`` (vLLM, MLA latent cache);
* ``sglang::store_cache(k[T,H*D], v[T,H*D], k_cache[slots,H*D], v_cache[slots,H*D],
  indices[T], *, row_bytes, num_split, size_limit)``: SGLang python/sglang/jit_kernel/kvcache.py,
  a python function registered by ``register_custom_op`` (python/sglang/srt/utils/custom_op.py)
  into ``torch.ops.sglang`` under its function name, so traces record ``sglang::store_cache``
  with 8 inputs (the 3 keyword ints as Concrete Inputs); its JIT kernel is ``store_kvcache``.
"""

from __future__ import annotations

from perfreport.errors import ModelError
from perfreport.models.args import Tensor, nargs, tensor_opt
from perfreport.models.base import PerfModel
from perfreport.models.dtypes import bytes_per_element, is_floating, precision_of

_INT = frozenset({"int32", "int64"})


class KVCacheWrite(PerfModel):
    category = "KVCache"
    kind = "vector"

    def __init__(self, op):
        super().__init__(op)
        ts = [t for t in (tensor_opt(op, i) for i in range(nargs(op))) if t is not None]
        slots = [t for t in ts if len(t.shape) == 1 and precision_of(t.dtype) in _INT]
        if not slots:
            raise ModelError(f"{op.name}: no 1-d integer slot mapping among the arguments")
        self.slots = slots[0]
        self.T = self.slots.shape[0]
        rest = [t for t in ts if t is not self.slots]
        self.new: list[Tensor] = [
            t for t in rest if t.shape and t.shape[0] == self.T and is_floating(t.dtype) and len(t.shape) <= 3
        ]
        # paged caches are 3-5-d; SGLang's are 2-d rows [slots, H*D]: 2+ dims, not new tokens
        self.caches = [t for t in rest if len(t.shape) >= 2 and all(t is not n for n in self.new)]
        if not self.new or not self.caches:
            raise ModelError(f"{op.name}: cannot tell new tokens from caches in {[list(t.shape) for t in ts]}")
        if len(self.caches) > 1 and len(self.new) != len(self.caches):
            raise ModelError(f"{op.name}: {len(self.new)} new-token tensors for {len(self.caches)} caches")
        self.scales = [
            t
            for t in rest
            if len(t.shape) <= 1 and is_floating(t.dtype) and t.numel <= 1024 and all(t is not n for n in self.new)
        ]

    def _cache_bpe(self, i: int) -> float:
        c = self.caches[i if len(self.caches) > 1 else 0]
        return bytes_per_element(c.dtype)

    def params(self) -> dict:
        return {
            "T": self.T,
            "new": tuple(t.shape for t in self.new),
            "dtype_new": self.new[0].dtype,
            "dtype_cache": self.caches[0].dtype,
        }

    def elements(self) -> int:
        return sum(t.numel for t in self.new)

    def flops(self) -> float:
        return float(self.elements())

    def bytes(self) -> float:
        read = sum(t.nbytes for t in self.new) + self.slots.nbytes + sum(t.nbytes for t in self.scales)
        write = sum(t.numel * self._cache_bpe(i) for i, t in enumerate(self.new))
        return read + write

    def precision(self) -> str:
        return precision_of(self.new[0].dtype)


__all__ = ["KVCacheWrite"]
