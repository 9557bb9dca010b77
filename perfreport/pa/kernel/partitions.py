"""How many split-K partitions the decode kernel uses: full waves of CTAs, few partials.

The partition kernel runs ``work * P`` CTAs (``work`` = sequences x KV heads, ``P`` partitions)
and ``SMs * CTAS_PER_SM`` of them are resident at once (one "wave"). A memory-bound kernel
reaches the bandwidth only while every SM has its CTAs reading, so the last wave should be
(nearly) full; every partition beyond one also costs partial writes and reduce reads
(``rows * (Dv + 2) * 4`` bytes each way, fp32), so among the counts that fill the waves the
smallest is taken:

    P = the smallest P in [1, P_max] with  work*P / (ceil(work*P / wave) * wave) >= FILL,
        P_max = min(MAX_PARTS, ceil(pages / MIN_PAGES));  if none reaches FILL, the P with the
        highest fill (the smallest such P on ties).

Headline shape (H200: 132 SMs; batch 32, 1 KV head, 64K context in pages of 64 = 1024 pages;
2 CTAs/SM -> wave 264): P = 8 gives 256 CTAs in one wave, 256/264 = 97% >= 90%, and each CTA
reads 128 pages. (The old rule, ~4 CTAs per SM, gave 17 partitions = 544 CTAs, a tail of 16.)

``ctas_per_sm`` comes from the compiled kernel itself: the host wrapper compiles the very kernel
it will launch (``JITFunction.warmup``) and reads its registers and shared memory
(:func:`perfreport.pa.kernel.tuning.ctas_per_sm`); ``CTAS_PER_SM`` (2, what every path's
default config compiles to on sm_90a at the headline shape: ``tests/pa/kernel/test_compiled_checks.py``)
is only the default of a direct call, and what the CPU interpreter uses.
"""

from __future__ import annotations

CTAS_PER_SM = 2
FILL = 0.9  # minimum fill of the last wave
MIN_PAGE_TOKENS = 256  # a partition reads at least this many tokens (amortizes its Q load and partials)
MAX_PARTS = 256


def wave_fill(ctas: int, wave: int) -> float:
    """Fraction of the CTA slots used over all waves: ctas / (ceil(ctas / wave) * wave)."""
    return ctas / (-(-ctas // wave) * wave)


def plan_partitions(work: int, pages: int, page: int, sms: int, ctas_per_sm: int = CTAS_PER_SM) -> int:
    """Partitions for ``work`` (sequence, KV head) pairs of up to ``pages`` pages each."""
    if work < 1 or pages < 1:
        return 1
    wave = max(1, sms * ctas_per_sm)
    min_pages = max(1, MIN_PAGE_TOKENS // page)
    p_max = max(1, min(MAX_PARTS, -(-pages // min_pages)))
    best, best_fill = 1, -1.0
    for p in range(1, p_max + 1):
        f = wave_fill(work * p, wave)
        if f >= FILL:
            return p
        if f > best_fill + 1e-12:
            best, best_fill = p, f
    return best


__all__ = ["CTAS_PER_SM", "FILL", "MAX_PARTS", "MIN_PAGE_TOKENS", "plan_partitions", "wave_fill"]
