"""Pass: attention ops inherit the chunk statistics of their iteration annotation.

Every op named in :data:`ATTENTION_OPS` (or matching :data:`ATTENTION_OP_PATTERNS`) gets
``perf_meta["iteration"]`` = the statistics (see :mod:`.iteration_formats`) of the
``user_annotation`` whose time range contains it, on any thread. When several contain
it, the innermost annotation with complete statistics wins; when none is complete, the
innermost one (its ``missing`` reason then reaches the report). SGLang nests its
``step[DECODE bs=..]`` (batch size only) inside the detailed ``execute_..`` annotation,
so "innermost complete" keeps the full statistics there.

One sweep over annotations and ops, both sorted by start time: the active list holds the
annotations already started and not yet ended, so each op looks only at the few open
ranges, not at every annotation.
"""
from __future__ import annotations

import re

from perfreport.passes import register_pass
from perfreport.passes.iteration_formats import parse_iteration
from perfreport.tree.records import USER_ANNOTATION

ATTENTION_OPS: tuple[str, ...] = (
    "vllm::unified_attention_with_output",
    "aiter::paged_attention_v1",
    "aiter::paged_attention_ragged",
    "aiter::mha_varlen_fwd",
    "aiter::fmha_v3_varlen_fwd",
    "aiter::mha_batch_prefill",
    "aiter::pa_decode_gluon",
    "sglang_profiler::attention_paged_attention_ragged",
    "_rocm_C::paged_attention",
    "perfreport::paged_attention_decode",
)

# SGLang's profiler wraps kernels as pseudo-ops with a per-layer suffix (``..._100``).
ATTENTION_OP_PATTERNS: tuple[re.Pattern[str], ...] = (
    re.compile(r"sglang_profiler::attention_paged_attention_ragged_\d+"),
)

# Float µs timestamps: allow 1 ns of rounding at the range ends.
_EPS = 1e-3


_NAMES = frozenset(ATTENTION_OPS)


def is_attention_op(name: str) -> bool:
    return name in _NAMES or any(rx.fullmatch(name) for rx in ATTENTION_OP_PATTERNS)


def _targets(tree) -> list:
    verdict: dict[str, bool] = {}
    out = []
    for o in tree.ops:
        if o.cat == USER_ANNOTATION:
            continue
        v = verdict.get(o.name)
        if v is None:
            v = verdict[o.name] = is_attention_op(o.name)
        if v:
            out.append(o)
    return out


@register_pass("iteration annotations", writes=("iteration",), order=10)
def annotate_iterations(tree) -> None:
    anns = []
    for o in tree.ops:
        if o.cat == USER_ANNOTATION:
            stats = parse_iteration(o.name)
            if stats is not None:
                anns.append((o, stats))
    if not anns:
        return
    ops = _targets(tree)
    if not ops:
        return
    anns.sort(key=lambda a: a[0].ts)          # tree.ops is sorted already; be safe
    ops.sort(key=lambda o: o.ts)

    active: list = []
    i = 0
    n = len(anns)
    for op in ops:
        start, end = op.ts, op.ts + op.dur
        while i < n and anns[i][0].ts <= start + _EPS:
            active.append(anns[i])
            i += 1
        if not active:
            continue
        # an annotation that ended before this op started cannot hold any later op
        active = [a for a in active if a[0].ts + a[0].dur >= start - _EPS]
        best = None
        best_key = None
        for ann, stats in active:
            if ann.ts + ann.dur + _EPS < end:
                continue
            # complete statistics first, then the innermost (latest start, shortest)
            key = ("missing" not in stats, ann.ts, -ann.dur)
            if best_key is None or key > best_key:
                best, best_key = stats, key
        if best is not None:
            op.set_meta("iteration", best)


__all__ = ["ATTENTION_OPS", "ATTENTION_OP_PATTERNS", "is_attention_op", "annotate_iterations"]
