"""Iteration-annotation formats: one registry, one entry per engine format.

Serving engines wrap each scheduler step in a ``user_annotation`` whose name carries the
step's attention chunk statistics. Each format below is a regex plus a converter that
turns a match into the statistics dict the inference-attention models read:

* ``c_sq, c_sk, c_sqsq, c_sqsk``: prefill ("context") group, ``g_*``: decode
  ("generation") group; per group ``sq`` = sum of new query tokens, ``sk`` = sum of KV
  lengths including the new tokens, ``sqsq`` = sum of sq^2, ``sqsk`` = sum of sq*sk;
* ``c_reqs, g_reqs``: request counts per group (None when the format does not say);
* ``format``: the format's name; ``annotation``: the annotation text;
* ``estimated``: present only when some statistics are point estimates (compact form with
  several requests): ``{key: (low, high)}`` bounds of each estimated statistic;
* ``missing``: present only when some statistic is unknown (value None); a one-line
  reason such as ``annotation has no sk (vLLM native format)``. Models refuse to compute
  FLOPs/bytes from incomplete statistics and show this reason instead.

Adding an engine's format is one :func:`register_format` call.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Callable

STAT_KEYS = ("c_sq", "c_sk", "c_sqsq", "c_sqsk", "g_sq", "g_sk", "g_sqsq", "g_sqsk")


@dataclass(frozen=True)
class IterationFormat:
    name: str
    regex: re.Pattern[str]
    convert: Callable[[re.Match[str]], dict]


FORMATS: list[IterationFormat] = []


def register_format(name: str, pattern: str):
    """Decorator: ``convert(match) -> dict | None`` for names that fully match ``pattern``.

    The converter returns any subset of :data:`STAT_KEYS` plus ``c_reqs``/``g_reqs``;
    keys it leaves out are unknown. It may set ``missing`` to explain what is unknown,
    ``estimated`` (see above) and ``format`` (a sub-format's name); returning None means
    "not this format after all".
    """

    def deco(fn: Callable[[re.Match[str]], dict]):
        FORMATS.append(IterationFormat(name, re.compile(pattern), fn))
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
        out: dict = {k: raw.get(k) for k in STAT_KEYS}
        out["c_reqs"] = raw.get("c_reqs")
        out["g_reqs"] = raw.get("g_reqs")
        if raw.get("estimated"):
            out["estimated"] = dict(raw["estimated"])
        out["format"] = raw.get("format") or fmt.name
        out["annotation"] = annotation
        unknown = [k for k in STAT_KEYS if out[k] is None]
        if unknown:
            out["missing"] = raw.get("missing") or (f"annotation has no {', '.join(unknown)} ({fmt.name} format)")
        return out
    return None


def is_complete(stats: dict | None) -> bool:
    return bool(stats) and "missing" not in stats


# ---------------------------------------------------------------------------------
# The formats
# ---------------------------------------------------------------------------------
_STEP = r"(?:execute_(\d+)_|execute_)"  # optional "<T>_": tokens scheduled this step
_GROUP = r"\(([0-9a-z_]*)\)"
_DETAILED = re.compile(r"sq(\d+)sk(\d+)sqsq(\d+)sqsk(\d+)")
_COMPACT = re.compile(r"(\d+)_(\d+)")
_NATIVE = re.compile(r"\d+")


def group_from_sums(prefix: str, reqs: int, sq: int, sk: int) -> dict:
    """One group's statistics from its request count and two sums (compact form).

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


def _group(prefix: str, reqs: int, text: str) -> tuple[str, dict] | None:
    """(syntax, statistics) of one ``(...)`` group, or None when it is none of the three."""
    m = _DETAILED.fullmatch(text)
    if m:
        sq, sk, sqsq, sqsk = (int(x) for x in m.groups())
        return "detailed", {f"{prefix}_sq": sq, f"{prefix}_sk": sk, f"{prefix}_sqsq": sqsq, f"{prefix}_sqsk": sqsk}
    m = _COMPACT.fullmatch(text)
    if m:
        return "compact", group_from_sums(prefix, reqs, int(m.group(1)), int(m.group(2)))
    if _NATIVE.fullmatch(text):
        sq = int(text)
        out = {f"{prefix}_sq": sq}
        if reqs == 0 or sq == 0:  # an empty group is fully known
            out.update({f"{prefix}_sk": 0, f"{prefix}_sqsq": 0, f"{prefix}_sqsk": 0})
        return "native", out
    return None


@register_format("vLLM execute", _STEP + r"context_(\d+)" + _GROUP + r"_generation_(\d+)" + _GROUP)
def _vllm_execute(m: re.Match[str]) -> dict | None:
    """vLLM's step annotation ``execute_[<T>_]context_<Rc>(<group>)_generation_<Rg>(<group>)``.

    Each group is one of three syntaxes, named in ``format``:
    * detailed ``sq<a>sk<b>sqsq<c>sqsk<d>`` (all four sums; "vLLM detailed");
    * compact ``<tokens>_<kv>``: new-token and KV-token sums (KV including the new tokens,
      as sk in the detailed form); sqsq/sqsk derived where exact, else estimated with bounds
      (:func:`group_from_sums`) ("vLLM compact");
    * native ``<tokens>``: new tokens only, no KV lengths ("vLLM native": incomplete unless
      the group is empty).
    ``<T>`` (tokens scheduled) equals c_sq + g_sq up to padding and is not needed.
    """
    _, cr, ctext, gr, gtext = m.groups()
    c, g = _group("c", int(cr), ctext), _group("g", int(gr), gtext)
    if c is None or g is None:
        return None
    kinds = {c[0], g[0]}
    est = {**c[1].pop("estimated", {}), **g[1].pop("estimated", {})}
    out = {"c_reqs": int(cr), "g_reqs": int(gr), **c[1], **g[1]}
    out["format"] = "vLLM native" if "native" in kinds else "vLLM compact" if "compact" in kinds else "vLLM detailed"
    if est:
        out["estimated"] = est
    if any(k not in out for k in STAT_KEYS):
        out["missing"] = "annotation has no sk (vLLM native format)"
    return out


@register_format("SGLang step", r"step\[([A-Z_]+)((?:\s+\w+=\d+)*)\s*\]")
def _sglang_step(m: re.Match[str]) -> dict:
    # SGLang's own step annotation carries only the forward mode, the batch size and (for
    # EXTEND) the new-token count: KV lengths are absent, so sk/sqsk are unknown. What can
    # be derived: DECODE has one new token per request (sq = sqsq = bs, no prefill group);
    # EXTEND has sq = toks and no decode group. SGLang traces usually carry the vLLM
    # detailed annotation around it too; the annotation pass prefers a complete one.
    mode = m.group(1)
    kv = dict(tok.split("=") for tok in m.group(2).split())
    kv = {k: int(v) for k, v in kv.items()}
    bs = kv.get("bs")
    zero = {"c_sq": 0, "c_sk": 0, "c_sqsq": 0, "c_sqsk": 0}
    if mode == "DECODE" and bs is not None:
        toks = kv.get("toks", bs)
        out = dict(zero, c_reqs=0, g_reqs=bs, g_sq=toks)
        if toks == bs:
            out["g_sqsq"] = bs  # every request adds exactly one token
        out["missing"] = "annotation has no sk (SGLang step[DECODE] format)"
        return out
    if mode == "EXTEND" and "toks" in kv:
        return {
            "c_reqs": bs,
            "c_sq": kv["toks"],
            "g_reqs": 0,
            "g_sq": 0,
            "g_sk": 0,
            "g_sqsq": 0,
            "g_sqsk": 0,
            "missing": "annotation has no sk or per-request lengths (SGLang step[EXTEND] format)",
        }
    return {"missing": f"SGLang step[{mode}] annotation carries no chunk statistics"}


__all__ = [
    "STAT_KEYS",
    "group_from_sums",
    "IterationFormat",
    "FORMATS",
    "register_format",
    "parse_iteration",
    "is_complete",
]
