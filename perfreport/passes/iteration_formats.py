"""Iteration-annotation formats: one registry, one entry per engine format.

Serving engines wrap each scheduler step in a ``user_annotation`` whose name carries the
step's attention chunk statistics. Each format below is a regex plus a converter that
turns a match into the statistics dict the inference-attention models read:

* ``c_sq, c_sk, c_sqsq, c_sqsk``: prefill ("context") group, ``g_*``: decode
  ("generation") group; per group ``sq`` = sum of new query tokens, ``sk`` = sum of KV
  lengths including the new tokens, ``sqsq`` = sum of sq^2, ``sqsk`` = sum of sq*sk;
* ``c_reqs, g_reqs``: request counts per group (None when the format does not say);
* ``format``: the format's name; ``annotation``: the annotation text;
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
    """Decorator: ``convert(match) -> dict`` for names that fully match ``pattern``.

    The converter returns any subset of :data:`STAT_KEYS` plus ``c_reqs``/``g_reqs``;
    keys it leaves out are unknown. It may set ``missing`` to explain what is unknown.
    """

    def deco(fn: Callable[[re.Match[str]], dict]):
        FORMATS.append(IterationFormat(name, re.compile(pattern), fn))
        parse_iteration.cache_clear()
        return fn

    return deco


@lru_cache(maxsize=4096)
def parse_iteration(annotation: str) -> dict | None:
    """Chunk statistics of an annotation name, or None when no format matches.

    The returned dict is shared between calls with the same name: do not mutate it.
    """
    for fmt in FORMATS:
        m = fmt.regex.fullmatch(annotation)
        if m is None:
            continue
        raw = fmt.convert(m)
        out: dict = {k: raw.get(k) for k in STAT_KEYS}
        out["c_reqs"] = raw.get("c_reqs")
        out["g_reqs"] = raw.get("g_reqs")
        out["format"] = fmt.name
        out["annotation"] = annotation
        unknown = [k for k in STAT_KEYS if out[k] is None]
        if unknown:
            out["missing"] = raw.get("missing") or (
                f"annotation has no {', '.join(unknown)} ({fmt.name} format)")
        return out
    return None


def is_complete(stats: dict | None) -> bool:
    return bool(stats) and "missing" not in stats


# ---------------------------------------------------------------------------------
# The formats
# ---------------------------------------------------------------------------------
_GROUP = r"\(sq(\d+)sk(\d+)sqsq(\d+)sqsk(\d+)\)"


@register_format("vLLM detailed", r"execute_(\d+)_context_(\d+)" + _GROUP
                 + r"_generation_(\d+)" + _GROUP)
def _vllm_detailed(m: re.Match[str]) -> dict:
    v = [int(x) for x in m.groups()]
    # v[0] = tokens scheduled this step (not needed: it equals c_sq + g_sq up to padding)
    return {"c_reqs": v[1], "c_sq": v[2], "c_sk": v[3], "c_sqsq": v[4], "c_sqsk": v[5],
            "g_reqs": v[6], "g_sq": v[7], "g_sk": v[8], "g_sqsq": v[9], "g_sqsk": v[10]}


@register_format("vLLM native", r"execute_context_(\d+)\((\d+)\)_generation_(\d+)\((\d+)\)")
def _vllm_native(m: re.Match[str]) -> dict:
    c_reqs, c_tok, g_reqs, g_tok = (int(x) for x in m.groups())
    # Only query-token counts: without KV lengths neither FLOPs nor bytes can be derived.
    return {"c_reqs": c_reqs, "c_sq": c_tok, "g_reqs": g_reqs, "g_sq": g_tok,
            "missing": "annotation has no sk (vLLM native format)"}


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
            out["g_sqsq"] = bs          # every request adds exactly one token
        out["missing"] = "annotation has no sk (SGLang step[DECODE] format)"
        return out
    if mode == "EXTEND" and "toks" in kv:
        return {"c_reqs": bs, "c_sq": kv["toks"], "g_reqs": 0, "g_sq": 0, "g_sk": 0,
                "g_sqsq": 0, "g_sqsk": 0,
                "missing": "annotation has no sk or per-request lengths (SGLang step[EXTEND] format)"}
    return {"missing": f"SGLang step[{mode}] annotation carries no chunk statistics"}


__all__ = ["STAT_KEYS", "IterationFormat", "FORMATS", "register_format", "parse_iteration",
           "is_complete"]
