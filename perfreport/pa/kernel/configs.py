"""Default tile size and pipelining depth of the decode kernel per target and path (data only).

``DEFAULTS`` is what :func:`perfreport.pa.kernel.tuning.search` chose from the ahead-of-time
compiles (the rule and the figures are in :mod:`perfreport.pa.kernel.tuning` and
docs/bench-pa.md); kept apart so the launch code reads it without importing the search.
"""

from __future__ import annotations

# (family, kv, mma) -> (block_n, num_stages); `python -m perfreport.pa.kernel.tuning` prints it
DEFAULTS = {
    ("sm_90", "bf16", "bf16"): (32, 4),  # 134 regs, 107,520 B shared: 2 CTAs (5 stages: 1)
    ("sm_90", "fp8", "f16"): (64, 4),  # 199 regs (252 in 5DV, token scales), 103,424 B: 2 (5 stages: 1)
    ("sm_90", "fp8", "fp8"): (64, 4),  # 255 regs no spills, 95,232 B: 2 (5 stages: 1 in 5DV)
    # gfx9: the previous defaults (3 stages; gfx942 BF16 238 VGPRs, 2 waves/SIMD). The gfx942 search
    # was cut short on a shared 2-core box: BF16 block_n 32 gave 2 CTAs/CU up to 4 stages (254
    # VGPRs), 1 at 5; the rest is unsearched (docs/bench-pa.md)
    ("gfx9", "bf16", "bf16"): (32, 3),
    ("gfx9", "fp8", "f16"): (64, 3),
    ("gfx9", "fp8", "fp8"): (32, 3),
}
FALLBACK = {"bf16": (32, 3), "f16": (64, 3), "fp8": (32, 3)}  # unsearched targets: the earlier 3 stages


def family(target: str) -> str:
    """``sm_90a`` -> ``sm_90``; ``gfx942`` / ``gfx950`` -> ``gfx9``; others as they are."""
    if target.startswith("sm_"):
        return target[:5]
    if target.startswith("gfx9"):
        return "gfx9"
    return target


def default_config(target: str, kv: str, mma: str) -> tuple[int, int]:
    """(block_n, num_stages) for ``kv`` "bf16"/"fp8" and ``mma`` "bf16"/"f16"/"fp8" on ``target``."""
    return DEFAULTS.get((family(target), kv, mma), FALLBACK[mma])


__all__ = ["DEFAULTS", "FALLBACK", "default_config", "family"]
