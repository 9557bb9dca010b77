"""Top-level trace metadata: keep what is well formed, drop the rest with a warning.

``deviceProperties`` only helps pick the GPU spec; a trace whose entries are garbage is
still a trace, so bad entries and fields are ignored (and said so), never fatal.
"""

from __future__ import annotations

# deviceProperties fields the report reads, and the type each must have
_INT_FIELDS = (
    "id",
    "numSms",
    "computeMajor",
    "computeMinor",
    "totalGlobalMem",
    "warpSize",
    "maxThreadsPerBlock",
    "maxThreadsPerMultiprocessor",
    "regsPerBlock",
    "regsPerMultiprocessor",
    "sharedMemPerBlock",
    "sharedMemPerMultiprocessor",
    "maxSharedMemoryPerMultiProcessor",
    "sharedMemPerBlockOptin",
)


def _kind(v) -> str:
    return "null" if v is None else type(v).__name__


def check_meta(meta: dict) -> list[str]:
    """Clean ``meta`` in place; return one warning line per kind of problem."""
    out: list[str] = []
    if "deviceProperties" not in meta:
        return out
    dp = meta["deviceProperties"]
    if not isinstance(dp, list):
        out.append(f"deviceProperties ignored: a {_kind(dp)}, not a list of objects")
        del meta["deviceProperties"]
        return out
    kept, bad_entries, bad_fields = [], 0, []
    for i, d in enumerate(dp):
        if not isinstance(d, dict):
            bad_entries += 1
            continue
        d = dict(d)
        for k in _INT_FIELDS:
            v = d.get(k)
            if v is not None and (type(v) is not int or v < 0):
                bad_fields.append(f"[{i}].{k} ({_kind(v)})")
                del d[k]
        if "name" in d and not isinstance(d["name"], str):
            bad_fields.append(f"[{i}].name ({_kind(d['name'])})")
            del d["name"]
        kept.append(d)
    if bad_entries:
        out.append(f"deviceProperties: {bad_entries} entries that are not objects ignored")
    if bad_fields:
        shown = ", ".join(bad_fields[:5]) + (" ..." if len(bad_fields) > 5 else "")
        out.append(f"deviceProperties: {len(bad_fields)} fields with a wrong type or a negative value ignored: {shown}")
    meta["deviceProperties"] = kept
    return out


__all__ = ["check_meta"]
