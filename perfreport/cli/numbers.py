"""Numeric options, checked before any work: finite, in range, one line naming the option.

A gate must not be disarmed by its value: ``--min-coverage nan`` compares false with every
coverage, so it could never fire; ``inf``, negative and > 100 values are refused the same way.
"""

from __future__ import annotations

import math

from perfreport.errors import BadInput

MAX_JOBS = 4096  # more workers than any host has cores; a typo like --jobs 10000000000 is refused
MAX_TOP = 1_000_000


def number(option: str, value, lo: float, hi: float | None = None, *, integer: bool = False, unit: str = ""):
    """``value`` (None passes) if it is a finite number in [lo, hi]; BadInput naming ``option``."""
    if value is None:
        return None
    rng = f"in [{_n(lo)}, {_n(hi)}]" if hi is not None else f">= {_n(lo)}"
    kind = "a whole number" if integer else "a finite number"
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise BadInput(option, f"must be {kind} {rng}{unit}, not {value!r}")
    if not math.isfinite(value) or value < lo or (hi is not None and value > hi):
        raise BadInput(option, f"must be {kind} {rng}{unit}, not {value:g}")
    return value


def _n(x) -> str:
    return str(int(x)) if float(x).is_integer() else f"{x:g}"


def percent(option: str, value):
    """A percentage: finite, 0 to 100."""
    return number(option, value, 0.0, 100.0, unit=" (a percentage)")


def check_analyze_numbers(*, short_kernel_us, top, min_coverage, jobs) -> None:
    """The numeric options of ``perfreport analyze`` (one trace or several)."""
    number("--short-kernel-us", short_kernel_us, 0.0, unit=" µs")
    number("--top", top, 0, MAX_TOP, integer=True)
    percent("--min-coverage", min_coverage)
    number("--jobs", jobs, 1, MAX_JOBS, integer=True)


__all__ = ["MAX_JOBS", "MAX_TOP", "check_analyze_numbers", "number", "percent"]
