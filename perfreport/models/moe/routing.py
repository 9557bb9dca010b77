"""MoE routing ops: top-k expert selection and sorting tokens by expert (category ``MoE``).

Memory-bound bookkeeping kernels: the roofline is their bytes. FLOPs follow the
elementwise / softmax conventions of models/elementwise.py and models/reduce.py: one
comparison per router logit for the top-k selection, 5 per element for a softmax, one
histogram increment per (token, expert) pick. Precision ``fp32`` (the kernels compute
softmax and index arithmetic in 32 bits), vector units.

Signatures (positional, as traces record them):
* ``TopK(x[T,E], k, apply_softmax, dim, return_bitmatrix, y_indx?, n_rows?)``: the
  triton_kernels ``TopK`` autograd Function (vLLM's GPT-OSS / triton MoE path; its cpu_op
  carries the class name). Writes values ``[T,k]`` (x's dtype), indices ``[T,k]`` (int16)
  and a bitmatrix of ``T × ceil(E/32)`` uint32 words. FLOPs ``T·E`` (+ ``5·T·k`` softmax).
* ``SortTokens(expt_scal[T,k], expt_indx[T,k], n_expts_tot=E, bitmatrix)``
  (triton_kernels routing): reads the picks and the bitmatrix; writes the expert histogram
  ``E`` int32, token and gate index lists ``T·k`` int32 each, sorted gate values ``T·k``
  (expt_scal's dtype) and token offsets ``E + 1`` int32. (Per-block-size offset tables
  depend on kernel constants the trace does not record: left out.) FLOPs ``T·k``.
* ``_moe_C::topk_softmax(topk_weights[T,k], topk_indices[T,k], token_expert_indices[T,k],
  gating_output[T,E], ...)`` (vLLM csrc/moe/torch_bindings.cpp); ``aiter::topk_softmax`` and
  ``vllm::rocm_aiter_topk_softmax`` take the same four first; ``sgl_kernel::topk_softmax(
  topk_weights, topk_ids, gating_output, ...)``: the gating output is read, the ``[T,k]``
  tensors written. FLOPs ``5·T·E`` (softmax) ``+ T·E`` (selection).
* ``_moe_C::moe_align_block_size(topk_ids[T,k], num_experts, block_size, sorted_token_ids,
  experts_ids, num_tokens_post_pad, ...)`` (vLLM), ``sgl_kernel::moe_align_block_size`` (adds
  cumsum / padding buffers), ``aiter::moe_sorting_fwd(topk_ids, topk_weights,
  sorted_token_ids, sorted_weights, sorted_expert_ids, num_valid_ids, moe_buf, ...)``: every
  tensor argument read or written once (the sorted buffers are written at their allocated,
  padded size; aiter zeroes ``moe_buf``). FLOPs ``T·k``.
"""

from __future__ import annotations

from math import ceil

from perfreport.errors import ModelError
from perfreport.models.args import Tensor, arg_bool, arg_int, nargs, tensor, tensor_opt
from perfreport.models.base import PerfModel
from perfreport.models.dtypes import bytes_per_element

INT16, INT32, UINT32 = 2, 4, 4
SOFTMAX_FLOPS = 5  # per element, as models/reduce.py Softmax


class Routing(PerfModel):
    category = "MoE"
    kind = "vector"

    def precision(self) -> str:
        return "fp32"


class TritonTopK(Routing):
    """TopK(x[T,E], k, apply_softmax, dim, return_bitmatrix, y_indx, n_rows)."""

    def __init__(self, op):
        super().__init__(op)
        self.x = tensor(op, 0, "x")
        if len(self.x.shape) != 2:
            raise ModelError(f"{op.name}: x {list(self.x.shape)} is not [T, E]")
        self.T, self.E = self.x.shape
        self.k = arg_int(op, 1)
        if not self.k:
            raise ModelError(f"{op.name}: k (argument 1) not recorded")
        self.softmax = bool(arg_bool(op, 2, True))

    def params(self) -> dict:
        return {"T": self.T, "E": self.E, "top_k": self.k, "softmax": self.softmax, "dtype": self.x.dtype}

    def flops(self) -> float:
        return float(self.T * self.E + (SOFTMAX_FLOPS * self.T * self.k if self.softmax else 0))

    def bytes(self) -> float:
        vals = self.T * self.k * bytes_per_element(self.x.dtype)
        idx = self.T * self.k * INT16
        bitmatrix = self.T * ceil(self.E / 32) * UINT32
        return self.x.nbytes + vals + idx + bitmatrix


class TritonSortTokens(Routing):
    """SortTokens(expt_scal[T,k], expt_indx[T,k], n_expts_tot, bitmatrix)."""

    def __init__(self, op):
        super().__init__(op)
        self.scal, self.indx = tensor(op, 0, "expt_scal"), tensor(op, 1, "expt_indx")
        if len(self.scal.shape) != 2:
            raise ModelError(f"{op.name}: expt_scal {list(self.scal.shape)} is not [T, k]")
        self.T, self.k = self.scal.shape
        self.E = arg_int(op, 2)
        if not self.E:
            raise ModelError(f"{op.name}: n_expts_tot (argument 2) not recorded")

    def params(self) -> dict:
        return {"T": self.T, "E": self.E, "top_k": self.k, "dtype": self.scal.dtype}

    def flops(self) -> float:
        return float(self.T * self.k)

    def bytes(self) -> float:
        picks = self.T * self.k
        read = self.scal.nbytes + self.indx.nbytes + self.T * ceil(self.E / 32) * UINT32
        write = self.E * INT32 + 2 * picks * INT32 + picks * bytes_per_element(self.scal.dtype) + (self.E + 1) * INT32
        return read + write


class TopkSoftmax(Routing):
    """(topk_weights[T,k], topk_ids[T,k], [token_expert_indices[T,k],] gating_output[T,E], ...)."""

    gating_i = 3

    def __init__(self, op):
        super().__init__(op)
        self.gating = tensor(op, self.gating_i, "gating_output")
        self.outs = [tensor(op, i) for i in range(self.gating_i)]
        if len(self.gating.shape) != 2 or len(self.outs[0].shape) != 2:
            raise ModelError(f"{op.name}: expects gating [T,E] and outputs [T,k]")
        self.T, self.E = self.gating.shape
        self.k = self.outs[0].shape[1]

    def params(self) -> dict:
        return {"T": self.T, "E": self.E, "top_k": self.k, "dtype": self.gating.dtype}

    def flops(self) -> float:
        return float((SOFTMAX_FLOPS + 1) * self.T * self.E)

    def bytes(self) -> float:
        return self.gating.nbytes + sum(t.nbytes for t in self.outs)


class SglTopkSoftmax(TopkSoftmax):
    """sgl_kernel::topk_softmax(topk_weights, topk_ids, gating_output, ...)."""

    gating_i = 2


class AlignBlockSize(Routing):
    """Sorting tokens by expert: every tensor argument once; topk_ids[T,k] first."""

    def __init__(self, op):
        super().__init__(op)
        ids = tensor(op, 0, "topk_ids")
        if len(ids.shape) != 2:
            raise ModelError(f"{op.name}: topk_ids {list(ids.shape)} is not [T, k]")
        self.T, self.k = ids.shape
        self.tensors: list[Tensor] = [t for t in (tensor_opt(op, i) for i in range(nargs(op))) if t]

    def params(self) -> dict:
        return {"T": self.T, "top_k": self.k, "tensors": tuple(t.shape for t in self.tensors)}

    def flops(self) -> float:
        return float(self.T * self.k)

    def bytes(self) -> float:
        return sum(t.nbytes for t in self.tensors)


__all__ = ["Routing", "TritonTopK", "TritonSortTokens", "TopkSoftmax", "SglTopkSoftmax", "AlignBlockSize"]
