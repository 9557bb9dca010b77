"""Fused mixture-of-experts (MoE) models: routed tokens through gated expert MLPs.

Each routed token runs one expert MLP: ``y = W2 · act(W1 · x)`` where, for gated experts
(SwiGLU / GeGLU), ``W1`` stacks gate and up projections (``[2I, H]``) and the activation
multiplies the two halves; ungated experts have ``W1`` of ``[I, H]``.

FLOPs (T tokens, top-k experts per token, hidden H, expert intermediate I):
  ``2·T·k·(H·N1 + I·H)`` with ``N1 = 2I`` gated (``I`` ungated): two GEMMs per routed
  token, 2 FLOPs per multiply-accumulate (same convention as the GEMM models; with
  E = k = 1 this is exactly the gated MLP's up/gate GEMM ``2·T·2I·H`` plus down GEMM
  ``2·T·H·I``, tested against models/gemm.py). Activation and routing-weight FLOPs
  (O(T·k·I)) are left out: < 0.1% at real sizes.

Bytes (ideal traffic, every operand once):
  hidden states read ``T·H`` + output written ``T·H`` (at the activation dtype; in-place
  ops read and write the same tensor: the same count) + router tensors the op takes
  (router logits ``T·E`` for ``vllm::moe_forward``; top-k weights and ids for the
  ``fused_experts`` forms; sorted ids / weights for aiter ``fmoe``) + the weights and
  scales of the *distinct experts the step touches*, ``D · bytes_per_expert``.
  Intermediate activations between the two GEMMs are not counted (a fused kernel keeps
  them on chip; an unfused one adds ``T·k·(N1 + I)`` reads/writes the ideal leaves out).

Distinct experts D: routing is data-dependent and no trace records it. The point figure
uses the count expected under uniform routing, ``E·(1 − (1 − k/E)^T)`` (each expert is
missed by one token with probability ``1 − k/E``), with bounds ``k … min(E, T·k)``
(every token picks the same k experts / all picks distinct) as an :class:`Assumption`.

Expert parallelism (models/moe/ep.py): when the router picks among E_g experts but the
weights hold E_l < E_g (the global count from the router logits, vLLM's ``expert_map`` /
aiter's ``expert_mask`` length, or ``--model-config`` num_experts; the local one always from
the weights), the kernel computes only the local (token, expert) assignments, expected
``A = T·k·E_l/E_g``: FLOPs ``2·A·(H·N1 + I·H)`` (N1 = 2I gated, I ungated: the same A
scales both), weights of the distinct local experts touched ``E_l·(1 − (1 − k/E_g)^T)``,
hidden-state rows of the tokens with a local pick, output ``T·H`` (written whole). Bounds
on A and on the distinct count are two assumptions; E_l = E_g gives the figures above.

Weight bytes come from the stored tensors: ``numel × bytes per recorded element`` of the
expert weight tensors (which may be uint8 storage of packed 4-bit values: the shapes then
show K/2, which :func:`solve_experts` detects against H and I). Packed 4-bit weights
without visible scale tensors are MXFP4: OCP Microscaling Formats (MX) Specification v1.0,
§5.3 / Table 1: MXFP4 = FP4 (E2M1) elements in blocks of 32 sharing one 8-bit E8M0 scale,
so 4 bits per value + 1 scale byte per 32 values along K.

Signatures (positional, as traces record them):
* ``vllm::moe_forward(hidden_states[T,H], router_logits[T,E], layer_name, ...)`` (vLLM
  ``FusedMoE`` custom op): the weights are not arguments; the "MoE shapes" pass
  (passes/moe_meta.py) writes ``perf_meta`` from the op's children (views of the expert
  weights) or from ``--model-config``, the "MoE top-k" pass (passes/moe_top_k.py) k from the
  routing ops' ``[T, k]`` tensors or k arguments under or before it.
* ``vllm::{inplace,outplace}_fused_experts(hidden_states, w1[E,N1,H], w2[E,H,I],
  topk_weights[T,k], topk_ids[T,k], ...)`` (vLLM fused_moe.py), SGLang's
  ``sglang::{inplace,outplace}_fused_experts`` (same leading five),
  ``aiter::fused_moe_(hidden_states, w1, w2, topk_weight, topk_ids, ...)`` and
  ``vllm::rocm_aiter_fused_moe(hidden_states, w1, w2, topk_weight, topk_ids, ...)``:
  later tensor arguments whose first dimension is E (w1/w2 scales, zero points, biases)
  are per-expert data, charged for the D touched experts.
* aiter ``fmoe*`` / ``ck_moe_stage1/2`` and vLLM ``cutlass_moe_mm``: models/moe/vendor.py.
"""

from __future__ import annotations

from msgspec.structs import replace

from perfreport.errors import ModelError
from perfreport.models.args import Tensor, arg_int, nargs, perf_meta, tensor, tensor_opt
from perfreport.models.moe import ep
from perfreport.models.base import Assumption
from perfreport.models.dtypes import precision_of
from perfreport.models.kernel_precision import KernelMath
from perfreport.models.moe.weights import FORMAT_BITS, MX_BLOCK, Experts, experts_from_config, solve_experts


def expected_distinct(E: int, k: int, T: int) -> float:
    """Experts touched by T tokens each routed to k of E, expected under uniform routing:
    E·(1 − (1 − k/E)^T), the one-rank case of :func:`moe_ep.expected_distinct_local`."""
    return ep.expected_distinct_local(T, k, E, E)


def distinct_bounds(E: int, k: int, T: int) -> tuple[int, int]:
    """(fewest, most) distinct experts: all tokens agree (k) / all picks differ (min(E, T·k));
    the one-rank case of :func:`moe_ep.distinct_local_bounds`."""
    return ep.distinct_local_bounds(T, k, E, E)


class FusedMoE(KernelMath):
    """Shared arithmetic; subclasses set T, k, experts, the activation tensors in ``_parse``
    (and ``E_global`` / ``experts_from`` where the op shows expert parallelism:
    models/moe/ep.py)."""

    category = "MoE"
    kind = "matrix"

    def __init__(self, op):
        super().__init__(op)
        self.io: list[Tensor] = []  # activation / router tensors read or written once
        self.out_bytes = 0.0
        self.E_global: int | None = None  # experts the router picks from (None: = local)
        self.experts_from = ""  # where local / global counts came from (EP rows)
        self.k_from = ""  # where top-k came from when it is not the op's own argument
        self._parse()
        self.x: Tensor
        self.T, self.H = self.x.shape[0], self.x.shape[-1]
        e_l = self.experts.E
        e_g = self.E_global or e_l
        if e_g < e_l:
            raise ModelError(f"{op.name}: the expert weights hold {e_l} experts but the routing picks among {e_g}")
        if self.k > e_g:
            raise ModelError(f"{op.name}: top-k {self.k} > {e_g} experts")
        self.E_global = e_g
        self.ep = e_g != e_l
        # at E_l = E_g: A = T·k, every token loaded, D = E·(1 − (1 − k/E)^T) (models/moe/ep.py)
        self.A = ep.expected_assignments(self.T, self.k, e_l, e_g)
        self.tokens = ep.expected_tokens(self.T, self.k, e_l, e_g)
        self.D = ep.expected_distinct_local(self.T, self.k, e_l, e_g)

    def _parse(self) -> None:
        raise NotImplementedError

    def params(self) -> dict:
        e = self.experts
        p = {
            "T": self.T,
            "H": e.H,
            "I": e.I,
            "E": e.E,
            "top_k": self.k,
            "gated": e.gated,
            "dtype_act": self.x.dtype,
            "weight_format": e.weight_format,
            "distinct_experts": round(self.D, 2),
            "sizes_from": e.source,
        }
        if self.ep:
            p.update(E_global=self.E_global, local_assignments=round(self.A, 2))
        if self.experts_from:
            p["experts_from"] = self.experts_from
        if self.k_from:
            p["top_k_from"] = self.k_from
        return p

    def _flops_at(self, assignments: float) -> float:
        e = self.experts
        n1 = 2 * e.I if e.gated else e.I
        return 2.0 * assignments * (e.H * n1 + e.I * e.H)

    def flops(self) -> float:
        return self._flops_at(self.A)  # A = T·k without expert parallelism

    def _bytes_at(self, distinct: float, tokens: float | None = None) -> float:
        b = sum(t.nbytes for t in self.io) + self.out_bytes + distinct * self.experts.bytes_per_expert
        if self.ep:  # hidden-state rows of tokens with no local pick are never loaded
            b -= self.x.nbytes * (1.0 - (self.tokens if tokens is None else tokens) / self.T)
        return b

    def bytes(self) -> float:
        return self._bytes_at(self.D)

    def assumptions(self) -> list[Assumption]:
        if not self.ep:
            lo, hi = distinct_bounds(self.experts.E, self.k, self.T)
            return [
                Assumption(
                    f"distinct experts touched: {self.D:.1f} expected under uniform routing "
                    f"(bounds {lo} … {hi}); the trace does not record routing",
                    self._bytes_at(lo),
                    self._bytes_at(hi),
                )
            ]
        T, k, e_l, e_g = self.T, self.k, self.experts.E, self.E_global
        a_lo, a_hi = ep.assignment_bounds(T, k, e_l, e_g)
        t_lo, t_hi = ep.token_bounds(T, k, e_l, e_g)
        d_lo, d_hi = ep.distinct_local_bounds(T, k, e_l, e_g)
        return [
            Assumption(
                f"expert parallelism, {e_l} of {e_g} experts on this rank "
                f"({self.experts_from}): local (token, expert) assignments "
                f"{self.A:.2f} expected = T·k·E_l/E_g under uniform routing (bounds "
                f"{a_lo} … {a_hi}), tokens loaded {self.tokens:.2f} (bounds {t_lo} … {t_hi})",
                self._bytes_at(self.D, t_lo),
                self._bytes_at(self.D, t_hi),
                self._flops_at(a_lo),
                self._flops_at(a_hi),
            ),
            Assumption(
                f"distinct local experts touched: {self.D:.2f} expected = "
                f"E_l·(1 − (1 − k/E_g)^T) under uniform routing (bounds {d_lo} … {d_hi}); "
                "the trace does not record routing",
                self._bytes_at(d_lo),
                self._bytes_at(d_hi),
            ),
        ]

    def precision(self) -> str:
        fmt = self.experts.weight_format
        if fmt.startswith("fp8") or precision_of(self.x.dtype) == "fp8":
            return "fp8"  # w8a8: FP8 matrix cores
        if precision_of(self.x.dtype) == "int8":
            return "int8"
        return precision_of(self.x.dtype)  # 16-bit activations (weights upcast in registers)


def top_k_of(op, i: int, tk: tuple[int, ...] = ()) -> tuple[int, str]:
    """(k, where from) of an op taking ``topk`` as int argument ``i``: that argument; else
    the second dim of the ``[T, k, ...]`` tensors at ``tk``; else the "MoE top-k" pass's
    ``moe_top_k`` (routing ops under or before the op); else a refusal naming what was
    looked at."""
    k = arg_int(op, i)
    if k:
        return k, ""
    for j in tk:
        t = tensor_opt(op, j)
        if t is not None and len(t.shape) == 3 and t.shape[1] > 0:
            return t.shape[1], f"argument {j} [T, k, *] (topk argument {i} not recorded)"
    pm = perf_meta(op)
    if pm.get("moe_top_k"):
        return pm["moe_top_k"], f"{pm.get('moe_top_k_source', 'routing ops')}; topk argument {i} not recorded"
    why = pm.get("moe_top_k_source") or "no routing op read"
    raise ModelError(f"{op.name}: top-k unknown: topk (argument {i}) not recorded; {why}")


def later_tensors(op, E: int, start: int, skip: int | None = None) -> tuple[float, list[Tensor]]:
    """Tensor arguments from ``start`` on (``skip`` excepted): (bytes per expert of those whose
    first dim is E -- scales, zero points, biases --, the others -- activation scales, routing
    weights -- which are read once)."""
    per_expert, once = 0.0, []
    for i in range(start, nargs(op)):
        t = tensor_opt(op, i)
        if t is None or i == skip:
            continue
        if t.shape and t.shape[0] == E:
            per_expert += t.nbytes / E
        else:
            once.append(t)
    return per_expert, once


class FusedExperts(FusedMoE):
    """(hidden_states[T,H], w1, w2, topk_weights[T,k], topk_ids[T,k], ...): vLLM / SGLang
    ``fused_experts``, aiter ``fused_moe_``, vLLM ``rocm_aiter_fused_moe``. The weights hold
    the local experts; the global count comes from ``expert_map`` / ``expert_mask`` (its
    length), else from ``--model-config`` num_experts (perf_meta ``moe_config``)."""

    needs = ("moe_config", "kernel_math")

    def _parse(self):
        op = self.op
        self.x = tensor(op, 0, "hidden_states")
        w1, w2 = tensor(op, 1, "w1"), tensor(op, 2, "w2")
        tw, ti = tensor(op, 3, "topk_weights"), tensor(op, 4, "topk_ids")
        if len(ti.shape) != 2:
            raise ModelError(f"{op.name}: topk_ids {list(ti.shape)} is not [T, k]")
        self.k = ti.shape[1]
        E = w1.shape[0] if w1.shape else 0
        emap = ep.expert_map_arg(op, E)
        extra, once = later_tensors(op, E, 5, skip=emap[0] if emap else None)
        self.experts = solve_experts(op, self.x.shape[-1], w1, w2, extra)
        self.io = [self.x, tw, ti] + once + ([emap[1]] if emap else [])
        self.out_bytes = self.x.nbytes
        self._global_count(emap)

    def _global_count(self, emap) -> None:
        op, e_l = self.op, self.experts.E
        cfg_e = (perf_meta(op).get("moe_config") or {}).get("num_experts")
        what = "expert_mask" if "aiter" in op.name else "expert_map"
        notes = []
        if emap is not None:
            self.E_global = emap[1].shape[0]
            notes.append(f"local {e_l} from the weights, global {self.E_global} from {what}'s length")
            if cfg_e and cfg_e != self.E_global:
                notes.append(f"model config num_experts {cfg_e} disagrees: the trace is used")
        elif cfg_e and cfg_e > e_l:
            self.E_global = cfg_e
            notes.append(
                f"local {e_l} from the weights (the trace wins), global {cfg_e} from the model config (num_experts)"
            )
        elif cfg_e and cfg_e != e_l:
            notes.append(
                f"model config num_experts {cfg_e} < the weights' {e_l}: the trace is used, no expert parallelism"
            )
        elif op.name.startswith("sglang::"):
            notes.append(
                "global count not recorded (SGLang passes local topk_ids): taken = "
                "local; give --model-config for expert parallelism"
            )
        self.experts_from = "; ".join(notes)


class VllmMoeForward(FusedMoE):
    """vllm::moe_forward(hidden_states[T,H], router_logits[T,E_g], layer_name, ...); sizes the
    op does not take come from the "MoE shapes" pass (perf_meta). The router logits give the
    global expert count, the expert weight views the local one (fewer under EP)."""

    needs = ("moe_top_k", "moe_top_k_source", "moe_expert_weights", "moe_config", "sharding", "kernel_math")
    sharding_note = ""

    def assumptions(self) -> list[Assumption]:
        out = super().assumptions()
        if self.sharding_note:  # a stated fact of the figure, no range of its own
            out.append(Assumption(self.sharding_note, self.bytes(), self.bytes()))
        return out

    def _parse(self):
        op = self.op
        pm = perf_meta(op)
        self.x = tensor(op, 0, "hidden_states")
        logits = tensor(op, 1, "router_logits")
        if len(self.x.shape) != 2 or len(logits.shape) != 2:
            raise ModelError(f"{op.name}: expects hidden_states [T,H] and router_logits [T,E]")
        cfg = pm.get("moe_config") or {}
        self.k = pm.get("moe_top_k") or cfg.get("top_k")
        self.k_from = pm.get("moe_top_k_source", "") if pm.get("moe_top_k") else "model config num_experts_per_tok"
        if not self.k:
            why = pm.get("moe_top_k_source") or "no routing op under it (TopK / topk_softmax)"
            raise ModelError(f"{op.name}: top-k unknown: {why}; and no --model-config num_experts_per_tok")
        H = self.x.shape[1]
        e_g, cfg_e = logits.shape[1], cfg.get("num_experts")
        notes = []
        w = pm.get("moe_expert_weights")
        if w:
            (s1, d1), (s2, d2), extra = w
            self.experts = solve_experts(
                op,
                H,
                Tensor(tuple(s1), d1),
                Tensor(tuple(s2), d2),
                extra,
                cfg.get("weight_format"),
                "trace (expert weight views)",
            )
            if self.experts.E != e_g:
                notes.append(
                    f"local {self.experts.E} from the expert weight views, global {e_g} from the router logits"
                )
        elif cfg:
            sh = pm.get("sharding") or {}
            tp = sh.get("tp") or 1
            self.experts = replace(experts_from_config(op, H, cfg, tp), E=e_g)
            notes.append(f"local count not visible (no expert weight views): taken = the router logits' {e_g}")
            if tp > 1:
                self.sharding_note = (
                    f"experts sharded by tensor parallelism {tp}: intermediate {cfg['intermediate_size']}/{tp} = "
                    f"{self.experts.I} per rank ({sh.get('evidence')}; with expert parallelism instead the rank "
                    f"holds {e_g // tp} whole experts: the same expected bytes under uniform routing)"
                )
        else:
            raise ModelError(
                f"{op.name}: expert weights not visible in the trace (no views "
                "of [E, *, *] tensors under the op): give --model-config"
            )
        if cfg_e and cfg_e != e_g:
            notes.append(f"model config num_experts {cfg_e} disagrees with the router logits' {e_g}: the trace is used")
        self.E_global = e_g
        self.experts_from = "; ".join(notes)
        self.io = [self.x, logits]
        self.out_bytes = self.x.nbytes


__all__ = ["FusedMoE", "FusedExperts", "VllmMoeForward", "later_tensors", "top_k_of", "Experts", "solve_experts"]
__all__ += ["experts_from_config", "expected_distinct", "distinct_bounds", "MX_BLOCK", "FORMAT_BITS"]
