"""Plausibility checks of a multi-rank run: what a user must be told, not merged silently.

* a ``distributedInfo.rank`` below 0, at or above the trace's ``world_size``, or above
  :data:`MAX_RANK` is not used (the file name or the position gives the rank) and is named;
* traces recorded on different GPUs (``deviceProperties`` names; a trace without any counts
  as "no deviceProperties") are merged, with a warning that they may not be one run;
* an input named twice (the same file by another path, or the same trace repeated) is read
  once, with a warning.
"""

from __future__ import annotations

import os

MAX_RANK = 1 << 20  # more ranks than any job has run; 10**20 is a corrupt or synthetic field


def checked_rank(rank, world_size) -> tuple[int | None, str | None]:
    """(the rank to use or None, why it was not used or None)."""
    if rank is None:
        return None, None
    if rank < 0 or rank >= MAX_RANK:
        return (
            None,
            f"distributedInfo.rank {rank} is not a plausible rank; the rank comes from the file name or position",
        )
    if world_size is not None and 0 < world_size <= rank:
        return None, (
            f"distributedInfo.rank {rank} is not below its world_size {world_size}; "
            "the rank comes from the file name or position"
        )
    return rank, None


def mixed_gpus(devices: list[tuple[int, str]]) -> str | None:
    """A warning when the ranks' GPUs differ: ``devices`` is (rank, GPU names) per rank."""
    by: dict[str, list[int]] = {}
    for rank, names in sorted(devices):
        by.setdefault(names or "no deviceProperties", []).append(rank)
    if len(by) < 2:
        return None
    parts = [
        f"{names} (rank{'s' if len(r) > 1 else ''} {', '.join(map(str, r[:8]))}{', …' if len(r) > 8 else ''})"
        for names, r in by.items()
    ]
    return "the traces were recorded on different GPUs: " + "; ".join(parts) + "; are they ranks of one run?"


def repeated_inputs(paths: list[str]) -> list[str]:
    """One warning per file named more than once among ``paths`` (the expanded arguments)."""
    seen: dict[tuple, list[str]] = {}
    for p in paths:
        try:
            st = os.stat(p)
            k = (st.st_dev, st.st_ino)
        except OSError:
            k = (None, os.path.realpath(p))
        seen.setdefault(k, []).append(p)
    return [
        f"{ps[0]}: warning: given {len(ps)} times{' (also as ' + ', '.join(sorted(set(ps[1:]) - {ps[0]})) + ')' if set(ps[1:]) - {ps[0]} else ''}; read once, as one rank"
        for ps in seen.values()
        if len(ps) > 1
    ]


__all__ = ["MAX_RANK", "checked_rank", "mixed_gpus", "repeated_inputs"]
