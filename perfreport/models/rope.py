"""Rotary position embedding (in place on query and key).

Signatures: ``_C::rotary_embedding(positions[T], query[T, H_Q·hs] or [T, H_Q, hs],
key?[T, H_KV·hs], head_size, cos_sin_cache[max_pos, rot_dim], is_neox)`` (vLLM
csrc/torch_bindings.cpp) — ``sgl_kernel::rotary_embedding`` has the same layout (seen in the
SGLang trace); ``_C::batched_rotary_embedding`` appends ``rot_dim, cos_sin_cache_offsets``.

Rotated elements R = T·(H_Q + H_KV)·rot_dim (rot_dim = cos_sin_cache.shape[-1]; with partial
rotary, rot_dim < head_size and the rest of each head is not touched).
FLOPs = 3·R: each output is x1·cos − x2·sin (2 mul + 1 add).
Bytes = 2·R at the q/k dtype (read + write in place) + positions + one cos/sin cache row per
token (T·rot_dim at the cache dtype). The reference tool counts only 2·R·dtype; we also count
the positions and cache rows the kernel must read.
"""

from __future__ import annotations

from perfreport.errors import ModelError
from perfreport.models.args import arg_bool, arg_int, tensor, tensor_opt
from perfreport.models.base import PerfModel
from perfreport.models.dtypes import bytes_per_element, precision_of


class RotaryEmbedding(PerfModel):
    category = "RoPE_fwd"
    kind = "vector"

    def __init__(self, op):
        super().__init__(op)
        self.pos = tensor(op, 0, "positions")
        self.q = tensor(op, 1, "query")
        self.k = tensor_opt(op, 2)
        self.head_size = arg_int(op, 3)
        self.cache = tensor(op, 4, "cos_sin_cache")
        self.is_neox = arg_bool(op, 5, True)
        if not self.head_size or self.head_size <= 0:
            raise ModelError(f"{op.name}: head_size not recorded")
        self.T = self.pos.numel
        self.rot_dim = self.cache.shape[-1]
        per_tok = self.T * self.head_size
        if self.T == 0 or self.q.numel % per_tok:
            raise ModelError(f"{op.name}: query {list(self.q.shape)} is not {self.T} tokens x heads x {self.head_size}")
        self.H_Q = self.q.numel // per_tok
        self.H_KV = self.k.numel // per_tok if self.k is not None else 0

    @property
    def rotated(self) -> int:
        return self.T * (self.H_Q + self.H_KV) * self.rot_dim

    def params(self) -> dict:
        return {
            "num_tokens": self.T,
            "H_Q": self.H_Q,
            "H_KV": self.H_KV,
            "head_size": self.head_size,
            "rot_dim": self.rot_dim,
            "is_neox": self.is_neox,
            "dtype": self.q.dtype,
        }

    def flops(self) -> float:
        return 3.0 * self.rotated

    def bytes(self) -> float:
        return (
            2 * self.rotated * bytes_per_element(self.q.dtype)
            + self.pos.nbytes
            + self.T * self.rot_dim * bytes_per_element(self.cache.dtype)
        )

    def precision(self) -> str:
        return precision_of(self.q.dtype)


__all__ = ["RotaryEmbedding"]
