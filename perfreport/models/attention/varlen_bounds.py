"""Bounds on the (query, key) pairs of a varlen attention batch whose per-sequence split is unknown.

A varlen call packs n sequences: total_q = Σ q_i query tokens and total_k = Σ k_i keys; the
profiler records the shapes (so n = len(cu_seqlens) − 1 and both totals) and the scalar
``max_seqlen_q`` / ``max_seqlen_k`` (M_q, M_k), never the ``cu_seqlens`` values. The pairs
the kernel computes, P = Σ g(q_i, k_i), depend on the split. What the trace constrains:

    Σ q_i = Q,  Σ k_i = K,  l_q ≤ q_i ≤ M_q,  l_k ≤ k_i ≤ M_k

with l = 1 (every packed sequence has a token; 0 where a total is below n), and, by the
serving convention the chunk-statistics path also uses (K holds every key of each sequence,
its new tokens included), q_i ≤ k_i when Q ≤ K. A missing or inconsistent maximum
(M·n < total) is replaced by the loosest one, total − (n − 1)·l.

Two facts give the extremes of each term:

1. The *concentrated* vector x^c (as many entries at M as the sum allows, one remainder, the
   rest at l; :func:`concentrated`) majorizes every feasible x: the sum of its j largest
   entries is the largest possible and the sum of its j smallest the smallest, for every j.
   The *equal* vector (total/n each, feasible since l ≤ total/n ≤ M) is majorized by all.
2. Σ x_i y_i over two such sets: for y sorted descending, Σ x_(i)↓ y_(i) = Σ_j (y_(j) −
   y_(j+1))·S_j(x) with S_j the sum of x's j largest entries and non-negative weights, so the
   maximum pairs both concentrated vectors sorted alike (rearrangement inequality + 1); with x
   sorted ascending against y descending the same identity with the j *smallest* entries gives
   the minimum at both concentrated vectors sorted oppositely. Hence
   max Σ q_i k_i = Σ q^c_(i)↓ k^c_(i)↓ and min Σ q_i k_i = Σ q^c_(i)↑ k^c_(i)↓ (exact).

Pair counts (sdpa.py conventions, continuous count):

* not causal: g = q·k, P in [min Σqk, max Σqk] (exact extremes);
* causal, bottom-right (flash-attn ≥ 2.1), q ≤ k: g = q·k − q²/2, so
  P ≤ max Σqk − ½·min Σq² = max Σqk − Q²/(2n) and
  P ≥ max(min Σqk − ½·max Σq²,  (K − Q)·l_q + Q²/(2n)); the second form writes g = q·c + q²/2
  with c = k − q ≥ 0, Σc = K − Q, q ≥ l_q, and Σq² ≥ Q²/n;
* causal, top-left (``aten::`` ops), q ≤ k: g = q²/2, P in [Q²/(2n), ½·max Σq²];
* causal with Q > K (the convention cannot hold): 0 ≤ g ≤ q·k, P in [0, max Σqk].

Each bound holds for every feasible split (the two terms are bounded separately, so the range
can be wider than the exact one for causal batches); the mean-length figure (every sequence
Q/n and K/n, feasible) always lies inside; when M_q·n = Q and M_k·n = K every sequence has the
same length and both bounds equal the mean-length figure. A sliding window of W keys caps P
at Q·W and each query sees at least its own key, so the windowed range is
[min(lo, Q), min(hi, Q·W)].
"""

from __future__ import annotations

Runs = list[tuple[int, float]]  # (count, value), values descending


def _floor(n: int, total: float) -> int:
    return 1 if total >= n else 0


def _cap(n: int, total: float, m: int | None) -> float:
    lo = _floor(n, total)
    loosest = total - (n - 1) * lo
    if m is None or m * n < total or m < lo:
        return loosest
    return min(m, loosest)


def concentrated(n: int, total: float, m: int | None) -> Runs:
    """The split of ``total`` over ``n`` entries in [l, M] that majorizes all others: as many at
    M as fit, one remainder, the rest at l (l = 1, or 0 when total < n)."""
    lo, cap = _floor(n, total), _cap(n, total, m)
    step, extra = cap - lo, total - n * lo
    full = min(n, int(extra // step)) if step > 0 else 0
    rem = extra - full * step
    runs: Runs = []
    for count, value in ((full, cap), (1 if full < n else 0, lo + rem), (max(n - full - 1, 0), lo)):
        if count and runs and runs[-1][1] == value:
            runs[-1] = (runs[-1][0] + count, value)
        elif count:
            runs.append((count, value))
    return runs


def paired_sum(a: Runs, b: Runs) -> float:
    """Σ a_(i)·b_(i) over two run lists of the same length, entry by entry in the given order."""
    total, i, j = 0.0, 0, 0
    ca, cb = (a[0][0] if a else 0), (b[0][0] if b else 0)
    while i < len(a) and j < len(b):
        c = min(ca, cb)
        total += c * a[i][1] * b[j][1]
        ca, cb = ca - c, cb - c
        if ca == 0:
            i += 1
            ca = a[i][0] if i < len(a) else 0
        if cb == 0:
            j += 1
            cb = b[j][0] if j < len(b) else 0
    return total


def square_sum(a: Runs) -> float:
    return sum(c * v * v for c, v in a)


def pair_bounds(
    n: int, total_q: int, total_k: int, max_q: int | None, max_k: int | None, causal: bool, align: str
) -> tuple[float, float]:
    """(lo, hi) of the batch's (q, k) pairs over every split the trace allows (module doc)."""
    qc, kc = concentrated(n, total_q, max_q), concentrated(n, total_k, max_k)
    qk_max = paired_sum(qc, kc)
    qk_min = paired_sum(list(reversed(qc)), kc)
    q2_min, q2_max = total_q * total_q / n, square_sum(qc)
    if not causal:
        return qk_min, qk_max
    if total_q > total_k:
        return 0.0, qk_max
    if align == "bottom_right":
        lo = max(qk_min - q2_max / 2, (total_k - total_q) * _floor(n, total_q) + q2_min / 2)
        return lo, qk_max - q2_min / 2
    return q2_min / 2, q2_max / 2


__all__ = ["concentrated", "paired_sum", "square_sum", "pair_bounds"]
