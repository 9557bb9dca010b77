"""Compact number text for people (console summary, HTML page): ``1.23 ms``, ``262 ms``, ``45%``.

Three significant digits, with the unit scaled so the number stays short: every string these
functions return is at most :data:`MAX_LEN` characters, so a column sized for it never wraps.
The workbook and CSV keep full precision; these are for reading, not for computing.
"""

from __future__ import annotations

import math

MAX_LEN = 8  # "999 µs", "1.23 ms", "262 ms", "1.23 ks" ...: the widest is 7; 8 leaves room


def _finite(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def sig3(v: float) -> str:
    """``v`` with three significant digits and no exponent for 0.001 <= |v| < 1e6:
    ``0.00123`` -> ``0.00123``, ``4.056`` -> ``4.06``, ``61.72`` -> ``61.7``, ``611.2`` -> ``611``,
    ``262422.4`` -> ``262,422``."""
    if v == 0:
        return "0"
    if abs(v) >= 999.5:
        return f"{v:,.0f}"
    r = float(f"{v:.3g}")  # round first: 0.9996 -> 1.0 has two decimals, not three
    if abs(r) < 0.001:
        return f"{v:.0e}"
    digits = 2 - int(math.floor(math.log10(abs(r))))
    return f"{r:.{max(0, digits)}f}"


def time_us(us) -> str:
    """A duration given in µs: ``0.512 µs``, ``51.2 µs``, ``4.06 ms``, ``262 ms``, ``1.23 s``."""
    if not _finite(us):
        return ""
    a = abs(us)
    if a < 999.5:
        return f"{sig3(us)} µs"
    if a < 999_500:
        return f"{sig3(us / 1e3)} ms"
    if a < 999_500_000:
        return f"{sig3(us / 1e6)} s"
    return f"{us / 1e6:.0e} s"


def pct(p) -> str:
    """A percentage given as 0-100: ``45%``, ``8.9%``, ``0.4%``, ``<0.1%``, ``0%``, ``123%``."""
    if not _finite(p):
        return ""
    a = abs(p)
    if a == 0:
        return "0%"
    if a >= 9.95:
        return f"{p:.0f}%" if a < 99_950 else ">1e5%"
    if a >= 0.05:
        return f"{p:.1f}%"
    return "<0.1%"


def number(v) -> str:
    """Any other figure (TFLOP/s, TB/s, FLOP/byte, GFLOP): three significant digits, thousands
    separated above 1000, exponent from 1e6 on so the text stays within :data:`MAX_LEN`."""
    if not _finite(v):
        return ""
    if isinstance(v, int):
        return count(v)
    if abs(v) >= 999_500:
        return f"{v:.2e}"
    return sig3(float(v))


def count(n) -> str:
    """A count: ``48``, ``1,234``, ``123k``, ``12.3M``."""
    if not _finite(n):
        return ""
    n = int(n)
    if abs(n) < 100_000:
        return f"{n:,}"
    if abs(n) < 999_500:
        return f"{n / 1e3:.0f}k"
    return f"{sig3(n / 1e6)}M" if abs(n) < 999_500_000 else f"{n:.1e}"


__all__ = ["MAX_LEN", "count", "number", "pct", "sig3", "time_us"]
