"""The iteration-annotation forms perfreport reads, each with the code that writes it.

Every number's meaning below is the writing code's own definition (docs/annotations.md
quotes the variable each comes from). Forms that match an engine's shape but that no code
was found to write are registered with ``source=None``: recognised as step boundaries,
their numbers never read.
"""

from __future__ import annotations

import re

from perfreport.stats.iteration_registry import (
    FORMATS,
    STAT_KEYS,
    IterationFormat,
    Source,
    group_from_sums,
    is_complete,
    parse_iteration,
    register_format,
)

# -- vLLM ------------------------------------------------------------------------------
VLLM_DETAILED = Source(
    "vllm-project/vllm",
    "vllm/v1/worker/gpu_worker.py",
    "Worker.annotate_profile (profiler_config.detailed_trace_annotation)",
    "PR #37524",
)
VLLM_NATIVE = Source(
    "vllm-project/vllm",
    "vllm/v1/worker/gpu_worker.py",
    "Worker.annotate_profile with vllm/v1/utils.py compute_iteration_details",
    "f8ba2da4134dac314dfc85aeaec22a53e350e4ec (utils.py); v0.25.0 (gpu_worker.py)",
)
VLLM_NEW_CACHED = Source(
    "vllm-project/vllm",
    "vllm/v1/worker/gpu_worker.py",
    "Worker.annotate_profile",
    "35d5cda123ec28581759b6d34cde8052314fb1e6 (PR #22496)",
)
# -- SGLang ----------------------------------------------------------------------------
SGLANG_STEP = Source(
    "sgl-project/sglang",
    "python/sglang/srt/model_executor/model_runner.py (later python/sglang/srt/utils/profile_utils.py)",
    "_build_step_span_name / build_step_span_name, build_roofline_suffix (roofline_annotations)",
    "PR #24911 for the c_/g_ fields",
)

_DETAILED_GROUP = r"\(sq(\d+)sk(\d+)sqsq(\d+)sqsk(\d+)\)"


@register_format(
    "vLLM detailed",
    r"execute_(\d+)_context_(\d+)" + _DETAILED_GROUP + r"_generation_(\d+)" + _DETAILED_GROUP,
    VLLM_DETAILED,
)
def _vllm_detailed(m: re.Match[str]) -> dict:
    """``execute_<T>_context_<Rc>(sq..sk..sqsq..sqsk..)_generation_<Rg>(sq..sk..sqsq..sqsk..)``.

    The writer sums per request: query_len = tokens scheduled this step, seq_len =
    num_computed_tokens + query_len (so sk includes the new tokens), sqsq = sum
    query_len^2, sqsk = sum query_len*seq_len; T = all scheduled tokens (not needed).
    """
    _, cr, csq, csk, csqsq, csqsk, gr, gsq, gsk, gsqsq, gsqsk = (int(x) for x in m.groups())
    return {
        "c_reqs": cr,
        "c_sq": csq,
        "c_sk": csk,
        "c_sqsq": csqsq,
        "c_sqsk": csqsk,
        "g_reqs": gr,
        "g_sq": gsq,
        "g_sk": gsk,
        "g_sqsq": gsqsq,
        "g_sqsk": gsqsk,
    }


def _native_group(prefix: str, reqs: int, tokens: int) -> dict:
    out = {f"{prefix}_sq": tokens}
    if reqs == 0 or tokens == 0:  # an empty group is fully known
        out.update({f"{prefix}_sk": 0, f"{prefix}_sqsq": 0, f"{prefix}_sqsk": 0})
    return out


@register_format("vLLM native", r"execute_context_(\d+)\((\d+)\)_generation_(\d+)\((\d+)\)", VLLM_NATIVE)
def _vllm_native(m: re.Match[str]) -> dict:
    """``execute_context_<Rc>(<tokens>)_generation_<Rg>(<tokens>)``: request and scheduled
    token counts per group (IterationDetails); no KV lengths, so incomplete unless both
    groups with tokens are empty. Decode tokens may exceed requests (speculative decoding)."""
    cr, ct, gr, gt = (int(x) for x in m.groups())
    out = {"c_reqs": cr, "g_reqs": gr, **_native_group("c", cr, ct), **_native_group("g", gr, gt)}
    if any(k not in out for k in ("c_sk", "g_sk")):
        out["missing"] = "annotation has no sk (vLLM native format)"
    return out


@register_format("vLLM new/cached", r"execute_new_(\d+)_cached_(\d+)", VLLM_NEW_CACHED)
def _vllm_new_cached(m: re.Match[str]) -> dict:
    """``execute_new_<N>_cached_<M>``: counts of newly scheduled and cached requests only (a
    cached request may still be prefilling): no token counts, no KV lengths."""
    return {
        "missing": "annotation has only new/cached request counts, no tokens or KV lengths (vLLM new/cached format)"
    }


# SGLang: base label plus (with roofline_annotations) the suffix fields, in the writer's order.
_SGLANG_KEYS = frozenset(
    {"bs", "toks", "c", "g", "c_sq", "c_sk", "c_sqsq", "c_sqsk", "g_sq", "g_sk", "g_sqsq", "g_sqsk"}
)


@register_format("SGLang step", r"step\[([A-Z_]+)((?:\s+\w+=\d+)*)\s*\]", SGLANG_STEP)
def _sglang_step(m: re.Match[str]) -> dict:
    """``step[EXTEND bs=<B> toks=<T>]`` / ``step[<MODE> bs=<B>]`` and, with roofline
    annotations, ``c_*``/``g_*`` sums (EXTEND: c_sqsq c_sqsk c_sk, later also c_sq; DECODE:
    g_sqsq g_sqsk g_sk, later also g_sq; MIXED: c= g= and all eight).

    The writer's definitions: per request nq = extend_seq_len (EXTEND/MIXED) or 1 (DECODE),
    nkv = extend_prefix_len + nq or seq_len; MIXED puts a length-1 extend in the g group.
    Without g_sq a DECODE step's nq is 1 per request, so g_sq = bs (the writer sets it so);
    EXTEND's toks = extend_num_tokens = c_sq.
    """
    mode = m.group(1)
    kv = {k: int(v) for k, v in (tok.split("=") for tok in m.group(2).split())}
    extra = sorted(set(kv) - _SGLANG_KEYS)
    if extra:
        return {"missing": f"SGLang step annotation with field(s) {', '.join(extra)} no known code writes"}
    bs = kv.get("bs")
    zero_c = {"c_reqs": 0, "c_sq": 0, "c_sk": 0, "c_sqsq": 0, "c_sqsk": 0}
    zero_g = {"g_reqs": 0, "g_sq": 0, "g_sk": 0, "g_sqsq": 0, "g_sqsk": 0}
    group = {k: v for k, v in kv.items() if k[:2] in ("c_", "g_")}
    if mode == "DECODE" and bs is not None and "toks" not in kv and not any(k.startswith("c") for k in kv):
        out = {**zero_c, "g_reqs": bs, "g_sq": bs, "g_sqsq": bs, **group}
        if not all(k in out for k in ("g_sk", "g_sqsk")):
            out["missing"] = "annotation has no sk (SGLang step[DECODE] format without roofline annotations)"
        return out
    if mode == "EXTEND" and bs is not None and "toks" in kv and not any(k.startswith("g") for k in kv):
        out = {**zero_g, "c_reqs": bs, "c_sq": kv["toks"], **group}
        if out["c_sq"] != kv["toks"]:
            return {"missing": f"SGLang step[EXTEND]: c_sq {out['c_sq']} != toks {kv['toks']}"}
        if not all(k in out for k in ("c_sk", "c_sqsq", "c_sqsk")):
            out["missing"] = "annotation has no sk or per-request lengths (SGLang step[EXTEND] format)"
        return out
    if mode == "MIXED" and bs is not None and "c" in kv and "g" in kv and len(group) == 8:
        if kv["c"] + kv["g"] != bs:
            return {"missing": f"SGLang step[MIXED]: c {kv['c']} + g {kv['g']} != bs {bs}"}
        return {"c_reqs": kv["c"], "g_reqs": kv["g"], **group}
    return {"missing": f"SGLang step[{mode}] annotation carries no chunk statistics"}


# -- recognised, never read ------------------------------------------------------------
@register_format(
    "vLLM-like (no known writer)",
    r"execute_(?:\d+_)?context_(\d+)\(([0-9a-z_]*)\)_generation_(\d+)\(([0-9a-z_]*)\)",
    None,
)
def _vllm_like_unknown(m: re.Match[str]) -> dict:
    """Any other ``execute_..context_..(..)_generation_..(..)``, e.g. the ``(<a>_<b>)`` form:
    no code in vllm-project/vllm, sgl-project/sglang or AMD-AGI/TraceLens's engine patches
    writes it (TraceLens only lists its regex to find step boundaries and reads none of its
    numbers). So its numbers are not read. The arithmetic says why guessing is wrong: in
    ``execute_context_1(888_788544)`` b = 788,544 = 888^2, which is sum(sq*sk) (= sum sq^2)
    of one fresh 888-token prefill, not a KV length."""
    cr, ctext, _, gtext = m.groups()
    why = f"annotation form {m.group(0)!r} is written by no known code: its numbers are not read"
    c = re.fullmatch(r"(\d+)_(\d+)", ctext)
    if c and int(cr) == 1 and int(c.group(2)) == int(c.group(1)) ** 2 and int(c.group(1)) > 1:
        a, b = int(c.group(1)), int(c.group(2))
        why += f" ({b} = {a}^2 fits sum(sq*sk) of one {a}-token prefill, not a KV length)"
    return {"missing": why}


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
