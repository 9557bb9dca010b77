"""Expert parallelism (EP): what one rank's MoE kernel does when it holds E_l of E_g experts.

Under EP (or when ``--model-config`` gives more experts than the weights hold) the router
picks among all E_g experts, but the op's expert weights are only this rank's E_l. The
kernels keep the global picks and skip the other ranks' ones:

* vLLM ``fused_experts(..., global_num_experts, expert_map, ...)``: ``expert_map`` ([E_g]
  int32) maps a global id to the local one or -1; ``moe_align_block_size`` gives the blocks of
  other ranks' experts the id -1, and ``fused_moe_kernel`` writes zeros for such a block
  without loading A (hidden states) or B (weights) ("Write back zeros to the output when the
  expert is not in the current expert parallel rank", vllm-project/vllm
  ``vllm/model_executor/layers/fused_moe/fused_moe.py``); the combine step still sums all
  k slots of every token, so the output is written for all T tokens.
* aiter ``fused_moe_(hidden_states, w1, w2, topk_weight, topk_ids, expert_mask, ...)``:
  ``expert_mask`` ([E_g], 1 = local) sets ``global_E = expert_mask.numel()`` and the sorting
  (``moe_sorting_fwd(..., expert_mask, num_local_tokens, ...)``) drops the other ranks'
  slots; the zeroed ``moe_buf`` [T, H] is the output (ROCm/aiter ``aiter/fused_moe.py``).
* SGLang ``StandardDispatcher.dispatch`` maps global ids through ``local_expert_mapping``
  (-1 = other rank) *before* the fused_experts op, whose ``topk_ids`` then hold local ids and
  the same -1 blocks (sgl-project/sglang
  ``python/sglang/srt/layers/moe/token_dispatcher/standard.py``): E_g is not an argument there.

Uniform routing, every token picking k distinct experts of E_g (all C(E_g, k) sets equally
likely), T tokens. The number of a token's picks that are local is hypergeometric:

* local (token, expert) assignments, expected ``A = T·k·E_l/E_g``; a token has at least
  ``max(0, k − (E_g − E_l))`` local picks (the other ranks hold only E_g − E_l experts) and at
  most ``min(k, E_l)``, so ``T·max(0, k − (E_g − E_l)) ≤ A ≤ T·min(k, E_l)``;
* tokens with at least one local pick (the hidden-state rows the kernel loads), expected
  ``T·(1 − C(E_g − E_l, k)/C(E_g, k))``, bounds ``T`` if k > E_g − E_l else 0 … T;
* distinct local experts touched (whose weights are read): a given expert is among a token's
  picks with probability k/E_g, so ``E_l·(1 − (1 − k/E_g)^T)`` expected; fewest
  ``min(E_l, max(0, k − (E_g − E_l)))`` (all tokens agree), most ``min(E_l, T·min(k, E_l))``.

With E_l = E_g every formula reduces to the single-rank one: A = T·k, all T tokens, D =
E·(1 − (1 − k/E)^T) with bounds k … min(E, T·k) (models/moe/experts.py).
"""

from __future__ import annotations

from math import comb

from perfreport.models.args import Tensor, concrete, nargs, tensor_opt


def expected_assignments(T: int, k: int, e_local: int, e_global: int) -> float:
    """Local (token, expert) pairs expected under uniform routing: T·k·E_l/E_g."""
    if e_local == e_global:
        return float(T * k)
    return T * k * e_local / e_global


def assignment_bounds(T: int, k: int, e_local: int, e_global: int) -> tuple[int, int]:
    """(fewest, most) local pairs: T·max(0, k − (E_g − E_l)) … T·min(k, E_l)."""
    return T * max(0, k - (e_global - e_local)), T * min(k, e_local)


def expected_tokens(T: int, k: int, e_local: int, e_global: int) -> float:
    """Tokens with at least one local pick, expected: T·(1 − C(E_g − E_l, k)/C(E_g, k))."""
    if e_local == e_global:
        return float(T)
    return T * (1.0 - comb(e_global - e_local, k) / comb(e_global, k))


def token_bounds(T: int, k: int, e_local: int, e_global: int) -> tuple[int, int]:
    """(fewest, most) tokens with a local pick: T if every token must have one, else 0 … T."""
    return (T if k > e_global - e_local else 0), (T if e_local > 0 else 0)


def expected_distinct_local(T: int, k: int, e_local: int, e_global: int) -> float:
    """Distinct local experts touched, expected: E_l·(1 − (1 − k/E_g)^T)."""
    if T <= 0 or k <= 0:
        return 0.0
    return e_local * (1.0 - (1.0 - min(k, e_global) / e_global) ** T)


def distinct_local_bounds(T: int, k: int, e_local: int, e_global: int) -> tuple[int, int]:
    """(fewest, most) distinct local experts: min(E_l, max(0, k − (E_g − E_l))) …
    min(E_l, T·min(k, E_l))."""
    if T <= 0 or k <= 0:
        return 0, 0
    return min(e_local, max(0, k - (e_global - e_local))), min(e_local, T * min(k, e_local))


_INT_TYPES = ("int", "long int", "short int", "unsigned char", "signed char", "bool")


AITER_MASK_POS = 5  # aiter fused_moe_(hidden_states, w1, w2, topk_weight, topk_ids, expert_mask, ...)


def expert_map_arg(op, e_local: int) -> "tuple[int, Tensor] | None":
    """(position, tensor) of the argument that gives the global expert count, or None:

    * aiter ``fused_moe_`` / vLLM ``rocm_aiter_fused_moe``: ``expert_mask`` at position 5,
      [E_g] integer, 1 = local (a later ``num_local_tokens`` [1] is also a 1-d int tensor, so
      only this position is read);
    * vLLM ``fused_experts``: ``expert_map`` [E_g] int32 (global -> local id or -1), the first
      1-d integer tensor after ``topk_ids`` whose preceding argument is the recorded int
      ``global_num_experts`` (its position moved between vLLM versions; the pair did not).

    A tensor shorter than the local count is not a map of the global experts: ignored."""
    if "aiter" in op.name:
        t = tensor_opt(op, AITER_MASK_POS)
        cand = [(AITER_MASK_POS, t)] if t is not None else []
    else:
        cand = [(i, tensor_opt(op, i)) for i in range(6, nargs(op)) if concrete(op, i - 1).lstrip("-").isdigit()]
    for i, t in cand:
        if t is not None and len(t.shape) == 1 and t.dtype in _INT_TYPES and t.shape[0] >= e_local:
            return i, t
    return None


__all__ = [
    "expert_map_arg",
    "expected_assignments",
    "assignment_bounds",
    "expected_tokens",
    "token_bounds",
    "expected_distinct_local",
    "distinct_local_bounds",
]
