"""Iteration-annotation registry: one entry per form some engine's code writes (the forms
themselves: :mod:`perfreport.stats.iteration_formats`).

Serving engines wrap each scheduler step in a ``user_annotation`` whose name carries the
step's attention chunk statistics. Each format below is a regex, a converter that turns a
match into the statistics dict the inference-attention models read, and the :class:`Source`
that writes it (repository, file, function, commit or pull request; docs/annotations.md
lists them with the code's own definition of every number):

* ``c_sq, c_sk, c_sqsq, c_sqsk``: prefill ("context") group, ``g_*``: decode
  ("generation") group; per group ``sq`` = sum of new query tokens, ``sk`` = sum of KV
  lengths including the new tokens, ``sqsq`` = sum of sq^2, ``sqsk`` = sum of sq*sk;
* ``c_reqs, g_reqs``: request counts per group (None when the format does not say);
* ``format``: the format's name; ``annotation``: the annotation text; ``source``: the
  :class:`Source` as text (None for a recognised form no code was found to write);
* ``missing``: present only when some statistic is unknown (value None); a one-line
  reason such as ``annotation has no sk (vLLM native format)``. Models refuse to compute
  FLOPs/bytes from incomplete statistics and show this reason instead.

A form registered without a source is *unknown*: it is still recognised as a step boundary
(so its ops are not attributed to an outer step), but none of its numbers are read; every
statistic is None and ``missing`` says why (e.g. ``execute_context_1(888_788544)...``
was read as 888 tokens on 788,544 KV tokens and gave 1784% of roofline).

Adding an engine's format is one :func:`register_format` call with its source, in
:mod:`perfreport.stats.iteration_formats`.
"""

from __future__ import annotations

import re
import msgspec
from functools import lru_cache
from typing import Callable

STAT_KEYS = ("c_sq", "c_sk", "c_sqsq", "c_sqsk", "g_sq", "g_sk", "g_sqsq", "g_sqsk")


class Source(msgspec.Struct, frozen=True):
    """The code that writes an annotation form."""

    repository: str
    file: str
    function: str
    commit: str  # a commit hash, a release tag or "PR #n" (merged)

    def __str__(self) -> str:
        return f"{self.repository} {self.file} {self.function} ({self.commit})"


class IterationFormat(msgspec.Struct, frozen=True):
    name: str
    regex: re.Pattern[str]
    convert: Callable[[re.Match[str]], dict]
    source: Source | None


FORMATS: list[IterationFormat] = []


def register_format(name: str, pattern: str, source: Source | None):
    """Decorator: ``convert(match) -> dict | None`` for names that fully match ``pattern``.

    The converter returns any subset of :data:`STAT_KEYS` plus ``c_reqs``/``g_reqs``;
    keys it leaves out are unknown. It may set ``missing`` to explain what is unknown and
    ``format`` (a sub-format's name); returning None means "not this format after all".
    With ``source`` None the form is unknown: only the converter's ``missing`` is kept.
    """

    def deco(fn: Callable[[re.Match[str]], dict]):
        FORMATS.append(IterationFormat(name, re.compile(pattern), fn, source))
        parse_iteration.cache_clear()
        return fn

    return deco


MAX_COUNT = 10**15  # tokens or requests in one step: far above any batch a GPU holds


@lru_cache(maxsize=4096)
def parse_iteration(annotation: str) -> dict | None:
    """Chunk statistics of an annotation name, or None when no format matches.

    The returned dict is shared between calls with the same name: do not mutate it.
    """
    for fmt in FORMATS:
        m = fmt.regex.fullmatch(annotation)
        if m is None:
            continue
        try:
            raw = fmt.convert(m)
        except ValueError:  # a number past int()'s digit limit (4300): no count a step can have
            raw = None
        if raw is not None and any(isinstance(v, int) and abs(v) > MAX_COUNT for v in raw.values()):
            raw = None  # an implausible count (beyond 10**15 tokens) is no annotation of a real step
        if raw is None:  # the converter refused a near miss
            continue
        if fmt.source is None:  # recognised, never read
            reason = raw.get("missing") or f"{fmt.name}: no code is known to write this form"
            raw = {"missing": reason}
        out: dict = {k: raw.get(k) for k in STAT_KEYS}
        out["c_reqs"] = raw.get("c_reqs")
        out["g_reqs"] = raw.get("g_reqs")
        out["format"] = raw.get("format") or fmt.name
        out["source"] = str(fmt.source) if fmt.source else None
        out["annotation"] = annotation
        unknown = [k for k in STAT_KEYS if out[k] is None]
        if unknown:
            out["missing"] = raw.get("missing") or (f"annotation has no {', '.join(unknown)} ({fmt.name} format)")
        return out
    return None


def is_complete(stats: dict | None) -> bool:
    return bool(stats) and "missing" not in stats


def group_from_sums(prefix: str, reqs: int, sq: int, sk: int) -> dict:
    """One group's statistics from its request count and two sums (used by models that see
    only per-batch sums, e.g. FlashInfer's prefill; no annotation form gives only these).

    sqsq = sum(sq_i^2) and sqsk = sum(sq_i*sk_i) are exact when the group is empty, has one
    request, or every request adds one token (decode: sq_i = 1 -> sqsq = R, sqsk = sk).
    Otherwise the point values assume equal requests (sq_i = sq/R, sk_i = sk/R: sqsq = sq^2/R,
    sqsk = sq*sk/R) and ``estimated`` records the bounds: sqsq in [sq^2/R, (sq-R+1)^2 + R-1]
    (equal requests; one request holding all but R-1 tokens) and sqsk in [sq^2/R, sq*sk]
    (sk_i >= sq_i gives sqsk >= sqsq >= sq^2/R; sum(sq_i*sk_i) <= sum(sq_i)*sum(sk_i)).
    """
    out: dict = {f"{prefix}_sq": sq, f"{prefix}_sk": sk}
    if reqs == 0 or sq == 0:
        out.update({f"{prefix}_sqsq": 0, f"{prefix}_sqsk": 0})
    elif reqs == 1:
        out.update({f"{prefix}_sqsq": sq * sq, f"{prefix}_sqsk": sq * sk})
    elif sq == reqs:
        out.update({f"{prefix}_sqsq": sq, f"{prefix}_sqsk": sk})
    else:
        out.update(
            {
                f"{prefix}_sqsq": sq * sq // reqs,
                f"{prefix}_sqsk": sq * sk // reqs,
                "estimated": {
                    f"{prefix}_sqsq": (sq * sq // reqs, (sq - reqs + 1) ** 2 + reqs - 1),
                    f"{prefix}_sqsk": (sq * sq // reqs, sq * sk),
                },
            }
        )
    return out


__all__ = [
    "STAT_KEYS",
    "Source",
    "group_from_sums",
    "IterationFormat",
    "FORMATS",
    "register_format",
    "parse_iteration",
    "is_complete",
]
