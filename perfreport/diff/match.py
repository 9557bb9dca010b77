"""Match the op rows of two reports, rule by rule, and say which rule matched.

Rows are ``unified_perf_summary`` rows (each GPU event counted once on each side). Rules, in
order; each applies only to the rows the earlier rules left unmatched, and rows sharing a key
on one side are summed first:

1. ``name+shapes+dtypes``: op name, ``input dims`` and ``input types`` equal;
2. ``name+category``: op name and category equal (shapes or dtypes changed);
3. ``kernel name``: the same set of kernel names (rows without an op, e.g. unlinked kernels,
   or an op renamed between versions).

What is left is ``vanished`` (only in A) or ``appeared`` (only in B).
"""

from __future__ import annotations

import msgspec
from msgspec import field
from perfreport.tables import columns as C

RULES = ("name+shapes+dtypes", "name+category", "kernel name")


class Group(msgspec.Struct):
    """Rows of one side that share a match key, summed."""

    rows: list[dict] = field(default_factory=list)

    def add(self, r: dict) -> None:
        self.rows.append(r)

    @property
    def time(self) -> float:
        return float(sum(_num(r.get(C.TIME_SUM_US)) for r in self.rows))

    @property
    def count(self) -> int:
        return int(sum(_num(r.get(C.COUNT)) for r in self.rows))

    def first(self, col: str) -> str:
        vals = {str(r.get(col) or "") for r in self.rows}
        return vals.pop() if len(vals) == 1 else "(several)"

    @property
    def roofline(self) -> float | None:
        """Call-weighted mean of the rows' ``roofline mean (%)`` (None if no row has one)."""
        num = den = 0.0
        for r in self.rows:
            v = r.get(C.ROOFLINE_MEAN_PCT)
            if v is not None and v != "":
                c = _num(r.get(C.COUNT)) or 1.0
                num += float(v) * c
                den += c
        return num / den if den else None

    @property
    def kernels(self) -> str:
        return "; ".join(str(r.get(C.KERNELS) or "") for r in self.rows if r.get(C.KERNELS))


class Match(msgspec.Struct):
    rule: str  # one of RULES, or 'appeared' / 'vanished'
    a: Group | None
    b: Group | None


def _num(v) -> float:
    if v is None or v == "":
        return 0.0
    return float(v)


def kernel_names(text) -> frozenset:
    """Kernel names of a ``kernels`` cell (``name [stream s] xN, mean t µs; ...``)."""
    if not text:
        return frozenset()
    out = set()
    for part in str(text).split("; "):
        i = part.rfind(" [stream ")
        out.add(part[:i] if i >= 0 else part)
    return frozenset(out)


def _key(rule: str, r: dict):
    if rule == RULES[0]:
        return (r.get(C.NAME), str(r.get(C.INPUT_DIMS) or ""), str(r.get(C.INPUT_TYPES) or ""))
    if rule == RULES[1]:
        return (r.get(C.NAME), r.get(C.CATEGORY))
    ks = kernel_names(r.get(C.KERNELS))
    return ks or None


def _group(rows: list[dict], rule: str) -> dict:
    out: dict = {}
    for r in rows:
        k = _key(rule, r)
        if k is None:
            continue
        out.setdefault(k, Group()).add(r)
    return out


def match_rows(a_rows: list[dict], b_rows: list[dict]) -> list[Match]:
    """Every row of A and of B in exactly one :class:`Match` (tested)."""
    out: list[Match] = []
    left_a, left_b = list(a_rows), list(b_rows)
    for rule in RULES:
        ga, gb = _group(left_a, rule), _group(left_b, rule)
        both = [k for k in ga if k in gb]
        taken_a, taken_b = set(), set()
        for k in both:
            out.append(Match(rule, ga[k], gb[k]))
            taken_a.update(id(r) for r in ga[k].rows)
            taken_b.update(id(r) for r in gb[k].rows)
        left_a = [r for r in left_a if id(r) not in taken_a]
        left_b = [r for r in left_b if id(r) not in taken_b]
    for g in _group(left_a, RULES[0]).values():
        out.append(Match("vanished", g, None))
    for g in _group(left_b, RULES[0]).values():
        out.append(Match("appeared", None, g))
    return out


__all__ = ["RULES", "Group", "Match", "match_rows", "kernel_names"]
