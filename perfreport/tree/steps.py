"""The steps of a run, and ``--steps``: which steps an analysis keeps.

A step is a CPU-side time range, found in this order (the first kind present wins):

1. ``ProfilerStep#<N>`` ranges: written by ``torch.profiler.profile.step()`` (pytorch/pytorch,
   ``torch/profiler/profiler.py``, ``profile.step`` opens ``record_function("ProfilerStep#" +
   str(self.step_num))``), so ``N`` is the profiler's own step number;
2. serving-engine iteration annotations (vLLM ``execute_...``, SGLang ``step[...]``: the forms
   and their sources are those of :mod:`perfreport.stats.iteration_formats`), numbered 0, 1, ...
   in time order;
3. graph replays (``cudaGraphLaunch`` / ``hipGraphLaunch`` calls), numbered 0, 1, ...: a
   piecewise-captured model replays several graphs per forward, so a "step" here is one replay.

Tokens and kind come from the iteration annotations inside the step (new tokens = c_sq + g_sq;
prefill when only the context group has requests, decode when only the generation group has,
mixed when both). A step is named a likely warm-up when it is one of the first two and its CPU
time is more than :data:`WARMUP_FACTOR` times the median of the steps after it (the first
active step of a run usually carries compilation, autotuning and allocator growth).
"""

from __future__ import annotations

import re
import msgspec

from perfreport.errors import BadInput
from perfreport.events import RUNTIME, USER_ANNOTATION
from perfreport.stats.iteration_formats import parse_iteration
from perfreport.stats.order import list_median

PROFILER_STEP = re.compile(r"ProfilerStep#(\d+)$")
GRAPH_LAUNCH = re.compile(r"(cuda|hip)GraphLaunch")
WARMUP_FACTOR = 2.0


class Step(msgspec.Struct):
    number: int  # ProfilerStep's N, else the position in time order
    label: str  # the range's name
    source: str  # "ProfilerStep", "iteration annotation", "graph replay"
    ts: float  # CPU start (µs)
    end: float  # CPU end (µs)
    tokens: int | None = None
    kind: str | None = None  # prefill / decode / mixed
    warmup: str = ""  # why this step looks like a warm-up ("" if it does not)


def find_steps(tree) -> list[Step]:
    """The run's steps by start time (see the module docstring); [] when it has none."""
    prof, iters, graphs = [], [], []
    # each distinct name is matched once (a trace has a few hundred names, tens of thousands of ops)
    step_no: dict = {}  # name -> its ProfilerStep number, or None
    graph: dict = {}  # name -> whether it is a graph launch
    for o in tree.ops:
        cat = o.cat
        if cat == USER_ANNOTATION or cat == "cpu_op":
            name = o.name
            n = step_no.get(name, step_no)
            if n is step_no:
                m = PROFILER_STEP.match(name)
                n = step_no[name] = int(m.group(1)) if m else None
            if n is not None:
                prof.append(Step(n, name, "ProfilerStep", o.ts, o.ts + o.dur))
                continue
            if cat == USER_ANNOTATION:
                stats = parse_iteration(name)
                if stats is not None:
                    iters.append((o, stats))
        elif cat == RUNTIME:
            g = graph.get(o.name)
            if g is None:
                g = graph[o.name] = GRAPH_LAUNCH.match(o.name) is not None
            if g:
                graphs.append(o)
    iters.sort(key=lambda a: a[0].ts)
    if prof:
        steps = sorted(prof, key=lambda s: s.ts)
    elif iters:
        steps = [Step(i, o.name, "iteration annotation", o.ts, o.ts + o.dur) for i, (o, _) in enumerate(iters)]
    else:
        graphs.sort(key=lambda o: o.ts)
        steps = [Step(i, o.name, "graph replay", o.ts, o.ts + o.dur) for i, o in enumerate(graphs)]
    _tokens(steps, iters)
    _warmups(steps)
    return steps


def _tokens(steps: list[Step], iters: list) -> None:
    j = 0
    for s in steps:
        while j < len(iters) and iters[j][0].ts < s.ts:
            j += 1
        k, toks, ctx, gen = j, 0, 0, 0
        seen = False
        while k < len(iters) and iters[k][0].ts < s.end:
            st = iters[k][1]
            sq = [st.get("c_sq"), st.get("g_sq")]
            if all(v is not None for v in sq):
                toks += sq[0] + sq[1]
                seen = True
            ctx += st.get("c_reqs") or (1 if st.get("c_sq") else 0)
            gen += st.get("g_reqs") or (1 if st.get("g_sq") else 0)
            k += 1
        if seen:
            s.tokens = toks
        if ctx or gen:
            s.kind = "mixed" if ctx and gen else "prefill" if ctx else "decode"


def _warmups(steps: list[Step]) -> None:
    for i, s in enumerate(steps[:2]):
        rest = [t.end - t.ts for t in steps[i + 1 :]]
        if len(rest) < 2:
            continue
        med = list_median(rest)
        if med > 0 and (s.end - s.ts) > WARMUP_FACTOR * med:
            s.warmup = f"likely warm-up: {(s.end - s.ts) / med:.1f}x the median of the later steps"


def parse_steps(spec: str) -> set[int] | tuple[int, int]:
    """``--steps``: ``A:B`` (numbers A to B, both included), ``A:`` / ``:B``, or ``N[,N...]``."""
    text = spec.strip()
    try:
        if ":" in text:
            a, b = text.split(":", 1)
            lo = int(a) if a.strip() else -(1 << 62)
            hi = int(b) if b.strip() else 1 << 62
            if lo > hi:
                raise ValueError
            return (lo, hi)
        nums = {int(x) for x in text.split(",") if x.strip()}
        if not nums:
            raise ValueError
        return nums
    except ValueError:
        raise BadInput("--steps", f"expected A:B, A:, :B or a list N,N,... of step numbers, not {spec!r}") from None


def select(steps: list[Step], spec: str) -> list[Step]:
    want = parse_steps(spec)
    if isinstance(want, tuple):
        out = [s for s in steps if want[0] <= s.number <= want[1]]
    else:
        out = [s for s in steps if s.number in want]
    if not steps:
        raise BadInput("--steps", "the trace has no steps (no ProfilerStep#N, iteration annotation or graph replay)")
    if not out:
        have = f"{steps[0].number}..{steps[-1].number}"
        raise BadInput("--steps", f"{spec!r} selects none of the trace's steps ({steps[0].source} {have})")
    return out


def restrict(tree, chosen: list[Step]) -> str:
    """Keep only what the chosen steps hold: ops that start inside a step (and their ancestors),
    the GPU events those ops launched, and unlinked GPU events that start inside a step.
    Returns the note that says what was kept."""
    wins = sorted((s.ts, s.end) for s in chosen)

    def inside(t: float) -> bool:
        return any(a <= t < b for a, b in wins)

    keep = {id(o) for o in tree.ops if inside(o.ts)}
    for o in list(tree.ops):
        if id(o) in keep:
            p = o.parent
            while p is not None and id(p) not in keep:
                keep.add(id(p))
                p = p.parent
    ops = [o for o in tree.ops if id(o) in keep]
    gpu = []
    for g in tree.gpu:
        own = g.owner
        if (own is not None and inside(own.ts)) or (own is None and inside(g.ts)):
            gpu.append(g)
    kept_gpu = {id(g) for g in gpu}
    for o in ops:
        if o.kernels and not inside(o.ts):  # an ancestor kept for its subtree: its own kernels go
            o.kernels = [k for k in o.kernels if id(k) in kept_gpu]
    tree.ops = ops
    tree.gpu = gpu
    tree.roots = [r for r in tree.roots if id(r) in keep]
    tree.gpu_annotations = [a for a in tree.gpu_annotations if inside(a.ts)]
    uids = {g.uid for g in gpu}
    tree.gpu_comm_args = {u: a for u, a in tree.gpu_comm_args.items() if u in uids}
    tree.invalidate_index()
    nums = ", ".join(str(s.number) for s in chosen)
    return f"steps: analysed {len(chosen)} {chosen[0].source} step(s) ({nums}) of the trace's steps, by --steps"


__all__ = ["Step", "find_steps", "parse_steps", "select", "restrict", "WARMUP_FACTOR"]
