"""What each side of a diff ran on: GPU, world size, rank; and whether A and B agree.

A trace gives them from its metadata (``deviceProperties`` names, the GPU spec used,
``distributedInfo`` rank and world size); a report JSON from the notes the analyze wrote (the
``deviceProperties: ...``, ``rank R of W (distributedInfo)`` and ``GPU spec: ...`` lines, see
:func:`perfreport.report.trace_facts`) and its ``spec`` key; a workbook or CSV directory records
none of them (unknown). A field differs when both sides know it and the values differ; a field
known on one side only is said to be unknown on the other, never assumed equal.
"""

from __future__ import annotations

import re

from perfreport.tables import columns as C

# the fields, named as the ranks sheet names them
FIELDS = (C.GPU, C.GPU_SPEC, C.WORLD_SIZE, C.RANK)
_DEV = re.compile(r"^deviceProperties: \d+ device\(s\): (.+)$")
_RANK = re.compile(r"^rank (\S+) of (\S+) \(distributedInfo\)$")
_SPEC = re.compile(r"^GPU spec: (.+?) \(")
_NO_SPEC = "GPU spec: none"  # "GPU spec: none matched ...": no spec to name


def from_meta(meta: dict, spec_key: str | None) -> dict:
    """The context of an analyzed trace from its top-level metadata."""
    out = dict.fromkeys(FIELDS)
    devs = meta.get("deviceProperties")
    if isinstance(devs, list):
        names = sorted({str(d.get("name")) for d in devs if isinstance(d, dict) and d.get("name")})
        out[C.GPU] = ", ".join(names) or None
    di = meta.get("distributedInfo")
    if isinstance(di, dict):
        out[C.RANK] = _s(di.get("rank"))
        out[C.WORLD_SIZE] = _s(di.get("world_size"))
    out[C.GPU_SPEC] = spec_key
    return out


def from_notes(notes, spec_key: str | None = None) -> dict:
    """The context of a report JSON from its notes (and its ``spec`` key)."""
    out = dict.fromkeys(FIELDS)
    for n in notes or []:
        n = str(n)
        m = _DEV.match(n)
        if m:
            out[C.GPU] = m.group(1)
        m = _RANK.match(n)
        if m:
            out[C.RANK] = m.group(1)
            out[C.WORLD_SIZE] = None if m.group(2) == "?" else m.group(2)
        m = _SPEC.match(n)
        if m and spec_key is None and not n.startswith(_NO_SPEC):
            out[C.GPU_SPEC] = m.group(1)
    if spec_key is not None:
        out[C.GPU_SPEC] = spec_key
    return out


def _s(v):
    return None if v is None else str(v)


def compare(a: dict, b: dict) -> tuple[list[dict], list[str]]:
    """(rows field / A / B / comparison, one warning line per field that differs)."""
    rows, warn = [], []
    for f in FIELDS:
        va, vb = a.get(f), b.get(f)
        if va is None and vb is None:
            how = "unknown on both sides"
        elif va is None or vb is None:
            how = f"unknown on {'A' if va is None else 'B'}"
        elif va == vb:
            how = "same"
        else:
            how = "differs"
            warn.append(f"A and B differ in {f}: A {va}, B {vb}")
        rows.append({C.FIELD: f, C.A: va or "", C.B: vb or "", C.COMPARISON: how})
    if warn:
        warn.append(
            "the times and speedups below compare runs on different "
            + " and ".join(w.split(" differ in ")[1].split(":")[0] for w in warn)
            + ": not like for like"
        )
    return rows, warn


__all__ = ["FIELDS", "from_meta", "from_notes", "compare"]
