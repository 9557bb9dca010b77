"""Pass: ops inherit the chunk statistics of their iteration annotation.

Every op whose perf model declares ``"iteration"`` in :attr:`PerfModel.needs` (so an
out-of-tree ``--models`` model gets them too), plus the model-less leaves in
:data:`EXTRA_OPS`, gets ``perf_meta["iteration"]`` = the statistics (see
:mod:`perfreport.stats.iteration_formats`) of the ``user_annotation`` whose time range
contains it, on any thread. When several contain it, the innermost annotation with complete
statistics wins; when none is complete, the innermost one (its ``missing`` reason then
reaches the report). SGLang nests its ``step[DECODE bs=..]`` (batch size only) inside the
detailed ``execute_..`` annotation, so "innermost complete" keeps the full statistics there.

One sweep over annotations and ops, both sorted by start time: the active list holds the
annotations already started and not yet ended, so each op looks only at the few open
ranges, not at every annotation.
"""

from __future__ import annotations

from perfreport.passes import ops_needing, register_pass
from perfreport.stats.iteration_formats import parse_iteration
from perfreport.events import USER_ANNOTATION

# Leaves without a model of their own whose statistics a reader may want (their parent is
# modelled): kept so the tree shows which step they ran in.
EXTRA_OPS: frozenset[str] = frozenset({"_rocm_C::paged_attention"})

# Float µs timestamps: allow 1 ns of rounding at the range ends.
_EPS = 1e-3


def iteration_annotations(tree) -> list:
    """(annotation op, statistics) of every iteration annotation, by start time."""
    anns = []
    for o in tree.ops:
        if o.cat == USER_ANNOTATION:
            stats = parse_iteration(o.name)
            if stats is not None:
                anns.append((o, stats))
    anns.sort(key=lambda a: a[0].ts)
    return anns


def containing(anns: list, ops: list):
    """Yield (op, annotation op, statistics) for each op inside an iteration annotation."""
    ops = sorted(ops, key=lambda o: o.ts)
    active: list = []
    i, n = 0, len(anns)
    for op in ops:
        start, end = op.ts, op.ts + op.dur
        while i < n and anns[i][0].ts <= start + _EPS:
            active.append(anns[i])
            i += 1
        if not active:
            continue
        # an annotation that ended before this op started cannot hold any later op
        active = [a for a in active if a[0].ts + a[0].dur >= start - _EPS]
        best = best_key = None
        for ann, stats in active:
            if ann.ts + ann.dur + _EPS < end:
                continue
            # complete statistics first, then the innermost (latest start, shortest)
            key = ("missing" not in stats, ann.ts, -ann.dur)
            if best_key is None or key > best_key:
                best, best_key = (ann, stats), key
        if best is not None:
            yield op, best[0], best[1]


@register_pass("iteration annotations", writes=("iteration",), order=10)
def annotate_iterations(tree) -> None:
    anns = iteration_annotations(tree)
    if not anns:
        return
    ops = ops_needing(tree, "iteration", EXTRA_OPS)
    for op, _, stats in containing(anns, ops):
        op.set_meta("iteration", stats)


__all__ = ["EXTRA_OPS", "iteration_annotations", "containing", "annotate_iterations"]
