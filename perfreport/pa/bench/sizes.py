"""Parsing of bench-pa's list flags: sizes such as ``16k``, ``64K``, ``1m`` and comma lists.

``k`` / ``K`` = 1024, ``m`` / ``M`` = 1024**2 (token counts are binary: 16k = 16384, as in the
seed's table). Every parser raises :class:`ValueError` with a one-line message naming the flag.
"""

from __future__ import annotations

import re

_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kKmM]?)\s*$")
_MULT = {"": 1, "k": 1024, "m": 1024**2}


def parse_size(text: str, flag: str = "size") -> int:
    """``"16k"`` -> 16384, ``"1m"`` -> 1048576, ``"300"`` -> 300. Must be a positive integer."""
    m = _SIZE.match(str(text))
    if not m:
        raise ValueError(f"{flag}: {text!r} is not a size (examples: 300, 16k, 64K, 1m)")
    value = float(m.group(1)) * _MULT[m.group(2).lower()]
    if value != int(value) or value < 1:
        raise ValueError(f"{flag}: {text!r} is not a positive whole number of tokens")
    return int(value)


def _items(text: str, flag: str) -> list[str]:
    items = [s.strip() for s in str(text).split(",")]
    if not items or any(not s for s in items):
        raise ValueError(f"{flag}: empty item in {text!r}")
    return items


def _dedup(values: list) -> list:
    seen, out = set(), []
    for v in values:
        if v not in seen:
            seen.add(v)
            out.append(v)
    return out


def parse_size_list(text: str, flag: str = "size") -> list[int]:
    """``"16k,64k"`` -> [16384, 65536] (order kept, duplicates dropped)."""
    return _dedup([parse_size(s, flag) for s in _items(text, flag)])


def parse_int_list(text: str, flag: str, *, minimum: int = 1, multiple_of: int | None = None) -> list[int]:
    """Plain integers (sizes with k/m allowed too), each >= ``minimum`` and a multiple if asked."""
    out = []
    for s in _items(text, flag):
        v = parse_size(s, flag) if _SIZE.match(s) else None
        if v is None:
            raise ValueError(f"{flag}: {s!r} is not an integer")
        if v < minimum:
            raise ValueError(f"{flag}: {v} is below the minimum {minimum}")
        if multiple_of and v % multiple_of:
            raise ValueError(f"{flag}: {v} is not a multiple of {multiple_of}")
        out.append(v)
    return _dedup(out)


def parse_choice_list(text: str, flag: str, choices: dict[str, str]) -> list[str]:
    """Case-insensitive names -> canonical names, e.g. ``"BF16,fp8"`` -> ["bf16", "fp8"]."""
    out = []
    for s in _items(text, flag):
        key = s.lower()
        if key not in choices:
            raise ValueError(f"{flag}: unknown value {s!r} (choose from {', '.join(sorted(set(choices)))})")
        out.append(choices[key])
    return _dedup(out)


MAX_PARTITIONS = 4096  # the kernel's bound (perfreport.pa.kernel.host.MAX_PARTITIONS)
MAX_SEED = 2**63 - 1  # torch.Generator.manual_seed takes a 64-bit value


def parse_partitions(text: str) -> str | int:
    """``auto`` or an integer in [1, 4096]."""
    s = str(text).strip().lower()
    if s == "auto":
        return "auto"
    if not s.isdigit() or not 1 <= int(s) <= MAX_PARTITIONS:
        raise ValueError(f"--partitions: {text!r} must be 'auto' or an integer in [1, {MAX_PARTITIONS}]")
    return int(s)


def check_seed(seed: int) -> int:
    if not 0 <= seed <= MAX_SEED - 1:  # the caches use seed + 1
        raise ValueError(f"--seed: {seed} is outside [0, 2**63 - 2]")
    return seed


__all__ = [
    "MAX_PARTITIONS",
    "check_seed",
    "parse_size",
    "parse_size_list",
    "parse_int_list",
    "parse_choice_list",
    "parse_partitions",
]
