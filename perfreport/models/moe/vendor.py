"""Vendor MoE kernels with their own signatures (category ``MoE``): aiter's ASM ``fmoe``
family and two-stage CK path, vLLM's CUTLASS grouped GEMM. The arithmetic, the weight-size
solving and the distinct-expert assumption are those of models/moe/experts.py.

Signatures (positional, as traces record them):
* ``aiter::fmoe[_g1u1|_int8_g1u0|_fp8_g1u1_a16|...](out[T,H], input[T,H], gate[E,N1,H],
  down[E,H,I], sorted_token_ids, sorted_weights, sorted_expert_ids, num_valid_ids, topk,
  ...scales)`` (aiter csrc/pybind moe_op_pybind.cu).
* aiter's two-stage CK path, one GEMM each: ``aiter::ck_moe_stage1(hidden_states[T,H],
  w1, w2, sorted_token_ids, sorted_expert_ids, num_valid_ids, out[T,k,*], topk,
  kernelName, w1_scale, a1_scale, ...)`` = the first GEMM (``2·T·k·H·N1`` FLOPs, w1 of the
  D touched experts) and ``aiter::ck_moe_stage2(inter_states[T,k,I], w1, w2, ...,
  out[T,H], topk, kernelName, w2_scale, a2_scale, ...)`` = the second (``2·T·k·I·H``, w2)
  (aiter ops/moe_op.py). Each stage's bytes: its input + output + sorted-id tensors + its
  weight (and scales) for D experts.
* vLLM's CUTLASS grouped GEMM, one of the two expert GEMMs over permuted rows:
  ``_C::cutlass_moe_mm(out_tensors[M,N], a_tensors[M,K], b_tensors[E,K,N] (or [E,N,K]),
  a_scales, b_scales, expert_offsets, problem_sizes, a_strides, b_strides, c_strides,
  per_act_token, per_out_ch)`` (vLLM csrc/torch_bindings.cpp): M = T·k routed rows, FLOPs
  ``2·M·N·K``; bytes a + out + a_scales, offsets, problem sizes and strides once + D · (b +
  b_scales) per expert. Top-k is not an argument, so D uses M independent picks: ``E·(1 − (1 − 1/E)^M)``
  (a little below the k-aware count), bounds ``1 … min(E, M)``.
"""

from __future__ import annotations

from msgspec.structs import replace

from perfreport.errors import ModelError
from perfreport.models.args import Tensor, tensor, tensor_opt
from perfreport.models.base import Assumption, PerfModel
from perfreport.models.dtypes import precision_of
from perfreport.models.moe.experts import FusedExperts, FusedMoE, expected_distinct, later_tensors, top_k_of
from perfreport.models.moe.weights import MX_BLOCK, MX_SCALE_BYTES, solve_experts


class AiterFmoe(FusedMoE):
    """aiter::fmoe*(out[T,H], input[T,H], gate[E,N1,H], down[E,H,I], sorted_token_ids,
    sorted_weights, sorted_expert_ids, num_valid_ids, topk, scales...). The weights hold the
    local experts; the sorted ids are already local (aiter's ``moe_sorting`` with its
    ``expert_mask``), so the global count can only come from ``--model-config`` num_experts:
    above the weights' count it is expert parallelism (models/moe/ep.py: figure with bounds).
    Without a recorded ``topk`` (argument 8), k comes from the routing ops around it (pass "MoE
    top-k": ``aiter::moe_sorting_fwd`` / ``topk_softmax`` ``[T, k]`` tensors)."""

    needs = ("moe_config", "moe_top_k", "moe_top_k_source")

    def _parse(self):
        op = self.op
        out = tensor(op, 0, "out")
        self.x = tensor(op, 1, "input")
        w1, w2 = tensor(op, 2, "gate"), tensor(op, 3, "down")
        self.k, self.k_from = top_k_of(op, 8)
        E = w1.shape[0] if w1.shape else 0
        extra, once = later_tensors(op, E, 9)
        self.experts = solve_experts(op, self.x.shape[-1], w1, w2, extra)
        self.io = [self.x] + [t for t in (tensor_opt(op, i) for i in range(4, 8)) if t] + once
        self.out_bytes = out.nbytes
        FusedExperts._global_count(self, None)


class AiterCkMoeStage(FusedMoE):
    """aiter::ck_moe_stage1 / ck_moe_stage2: one of the two expert GEMMs (see module doc);
    expert parallelism from ``--model-config`` num_experts as :class:`AiterFmoe`. Without a
    recorded ``topk`` (argument 7), k is the second dim of the ``[T, k, *]`` buffer (stage 1's
    ``out``, stage 2's ``inter_states``), else from the routing ops around it."""

    needs = ("moe_config", "moe_top_k", "moe_top_k_source")

    def _parse(self):
        op = self.op
        self.stage = 2 if op.name.endswith("stage2") else 1
        x = tensor(op, 0, "inter_states" if self.stage == 2 else "hidden_states")
        w1, w2 = tensor(op, 1, "w1"), tensor(op, 2, "w2")
        out = tensor(op, 6, "out")
        # [T, k, *]: stage 1's out (argument 6), stage 2's inter_states (argument 0)
        self.k, self.k_from = top_k_of(op, 7, (0,) if self.stage == 2 else (6,))
        H = out.shape[-1] if self.stage == 2 else x.shape[-1]
        E = w1.shape[0] if w1.shape else 0
        extra, once = later_tensors(op, E, 8)  # this stage's weight scale, a-scale, weights
        full = solve_experts(op, H, w1, w2)
        w = w2 if self.stage == 2 else w1
        per = w.nbytes / E + extra
        if extra == 0.0 and full.weight_format.startswith("mxfp4"):
            n1 = 2 * full.I if full.gated else full.I
            per += (full.I * H if self.stage == 2 else H * n1) * MX_SCALE_BYTES / MX_BLOCK
        self.experts = replace(full, bytes_per_expert=per)
        # T tokens: hidden_states[T, H] (stage 1) or inter_states[T, k, I] (stage 2)
        self.x = Tensor((x.shape[0], H), x.dtype)
        self.io = [x] + [t for t in (tensor_opt(op, i) for i in (3, 4, 5)) if t] + once
        self.out_bytes = out.nbytes
        FusedExperts._global_count(self, None)

    def params(self) -> dict:
        p = super().params()
        p["stage"] = self.stage
        return p

    def _flops_at(self, assignments: float) -> float:
        """This stage's GEMM for ``assignments`` routed (token, expert) pairs (A = T·k, or the
        local ones under expert parallelism)."""
        e = self.experts
        n1 = 2 * e.I if e.gated else e.I
        per_token = e.I * e.H if self.stage == 2 else e.H * n1
        return 2.0 * assignments * per_token


class CutlassMoeMm(PerfModel):
    """_C::cutlass_moe_mm: one grouped expert GEMM (see module doc)."""

    category = "MoE"
    kind = "matrix"

    def __init__(self, op):
        super().__init__(op)
        self.out, self.a, b = tensor(op, 0, "out_tensors"), tensor(op, 1, "a_tensors"), tensor(op, 2, "b_tensors")
        if len(self.a.shape) != 2 or len(self.out.shape) != 2 or len(b.shape) != 3:
            raise ModelError(f"{op.name}: expects out [M,N], a [M,K], b [E,*,*]")
        (self.M, self.K), self.N = self.a.shape, self.out.shape[1]
        self.E = b.shape[0]
        if sorted(b.shape[1:]) != sorted((self.K, self.N)):
            raise ModelError(f"{op.name}: b {list(b.shape)} is not [E, K, N] for K {self.K}, N {self.N}")
        bs = tensor_opt(op, 4)  # b_scales: per expert (and channel)
        per_expert = bs.nbytes / self.E if bs is not None and bs.shape and bs.shape[0] == self.E else 0.0
        self.bytes_per_expert = b.nbytes / self.E + per_expert
        self.once = [t for t in (tensor_opt(op, i) for i in (3, 5, 6, 7, 8, 9)) if t is not None]
        if not per_expert and bs is not None:
            self.once.append(bs)
        self.D = expected_distinct(self.E, 1, self.M)

    def params(self) -> dict:
        return {
            "M": self.M,
            "N": self.N,
            "K": self.K,
            "E": self.E,
            "dtype_a": self.a.dtype,
            "distinct_experts": round(self.D, 2),
        }

    def flops(self) -> float:
        return 2.0 * self.M * self.N * self.K

    def _bytes_at(self, d: float) -> float:
        return self.a.nbytes + self.out.nbytes + sum(t.nbytes for t in self.once) + d * self.bytes_per_expert

    def bytes(self) -> float:
        return self._bytes_at(self.D)

    def assumptions(self) -> list[Assumption]:
        lo, hi = 1, min(self.E, self.M)
        return [
            Assumption(
                f"distinct experts touched: {self.D:.1f} expected for {self.M} rows "
                f"routed uniformly (bounds {lo} … {hi}); top-k is not an argument",
                self._bytes_at(lo),
                self._bytes_at(hi),
            )
        ]

    def precision(self) -> str:
        return precision_of(self.a.dtype)


__all__ = ["AiterFmoe", "AiterCkMoeStage", "CutlassMoeMm"]
