"""Capture regions of a capture-time trace, in the two layouts the serving engines produce.

A *region* is the CPU side of one captured graph: its graph-node launch calls (one per node,
by time) and every CPU event that is cloned onto a replay launch. Both layouts give the same
:class:`Region`; :func:`find_regions` picks the layout, :func:`pick_region` the region a replay
launch belongs to.

* **vLLM**: each batch size is captured inside a ``user_annotation`` ``capture_<bs>_<mode>``
  (named by ``execution_details.json``); nodes are the launch calls between
  ``*StreamBeginCapture`` and ``*StreamEndCapture`` inside it.
* **SGLang** records no annotation around a capture (facts from sgl-project/sglang, see
  docs/analyze.md): ``--enable-profile-cuda-graph`` wraps the whole capture loop in one
  ``torch.profiler.profile(record_shapes=True)``, batch sizes are captured largest first
  (``reversed(capture_bs)``), and each size runs two eager warm-up forwards (real kernels)
  before ``torch.cuda.graph`` captures a third. So one region is one
  ``*StreamBeginCapture``..``*StreamEndCapture`` pair; its batch size (tokens) is read from
  the input shapes of the ops that launch its nodes (:func:`region_tokens`); the warm-up
  launches lie outside every pair and are no graph node.

A replay is tied to a region by the tokens of its iteration annotation, padded up to the
smallest captured size (SGLang ``_pad_to_bucket``, vLLM pads to its capture sizes too).
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections import Counter
from typing import NamedTuple

from perfreport.events import CPU_OP, DRIVER, KERNEL, MEMCPY, MEMSET, RUNTIME, USER_ANNOTATION, Op
from perfreport.tree.trace_tree import TraceTree

LAUNCH = (RUNTIME, DRIVER)
_KERNEL_CALL = re.compile(r"(hip|cuda|cu)(Ext)?(Module)?(Drv)?Launch(Cooperative)?Kernel")
_MEMCPY_CALL = re.compile(r"(hip|cuda|cu)Memcpy\w*Async")
_MEMSET_CALL = re.compile(r"(hip|cuda|cu)Memset\w*Async")
_BEGIN = re.compile(r"(hip|cuda|cu)StreamBeginCapture")
_END = re.compile(r"(hip|cuda|cu)StreamEndCapture")
_REGION_BS = re.compile(r"capture_(\d+)|\bbs[=_ ]?(\d+)")
_STEP = re.compile(r"ProfilerStep#\d+")
_EPS = 1e-3
VLLM, SGLANG = "vLLM", "SGLang"
OUTSIDE = "outside StreamBeginCapture..StreamEndCapture"
EAGER = "ran during capture (own GPU events in the capture trace)"


def node_kind(name: str) -> str | None:
    """The GPU event category a runtime call creates as a graph node, or None."""
    for rx, kind in ((_KERNEL_CALL, KERNEL), (_MEMCPY_CALL, MEMCPY), (_MEMSET_CALL, MEMSET)):
        if rx.match(name):
            return kind
    return None


def region_batch_size(name: str) -> int | None:
    """The batch size a capture region is named for: vLLM ``capture_<bs>_<mode>``, or a
    ``bs=<n>`` / ``bs_<n>`` part; None when the name has none."""
    m = _REGION_BS.search(name)
    return int(m.group(1) or m.group(2)) if m else None


class Region(NamedTuple):
    name: str  # the annotation, or "capture <i>/<n>" (SGLang)
    layout: str  # VLLM or SGLANG
    batch_size: int | None  # tokens the graph was captured for
    bs_from: str  # where batch_size came from
    t0: float  # CPU time range mapped onto a replay launch
    t1: float
    nodes: list[Op]  # graph-node launch calls, by time
    ops: list[Op]  # CPU events cloned onto a replay launch


class Regions(NamedTuple):
    layout: str | None  # None: the capture matches neither layout
    regions: list[Region]
    excluded: dict  # reason -> launch calls that are no graph node
    notes: list[str]


def _calls(ct: TraceTree):
    begins = [o for o in ct.ops if o.cat in LAUNCH and _BEGIN.match(o.name)]
    ends = [o for o in ct.ops if o.cat in LAUNCH and _END.match(o.name)]
    calls = [o for o in ct.ops if o.cat in LAUNCH and node_kind(o.name)]
    return begins, ends, calls


def _window(b: Op, ends: list[Op], hi: float) -> tuple[float, float]:
    e = next((e for e in ends if e.ts >= b.ts and e.pid == b.pid and e.tid == b.tid), None)
    return b.ts, e.end if e is not None else hi


def _vllm(ct: TraceTree, anns: list[Op], begins, ends, calls, excluded) -> list[Region]:
    out = []
    for a in anns:
        lo, hi = a.ts - _EPS, a.end + _EPS
        windows = [_window(b, ends, hi) for b in begins if lo <= b.ts <= hi and b.pid == a.pid]
        nodes = []
        for c in (c for c in calls if lo <= c.ts <= hi and c.pid == a.pid):
            if windows and not any(w0 <= c.ts <= w1 for w0, w1 in windows):
                why = OUTSIDE
            elif c.kernels:
                why = EAGER
            else:
                nodes.append(c)
                continue
            excluded[why] = excluded.get(why, 0) + 1
        ops = [o for o in ct.ops if lo <= o.ts and o.end <= hi and o.pid == a.pid]
        out.append(
            Region(
                a.name,
                VLLM,
                region_batch_size(a.name),
                "annotation name",
                a.ts,
                a.end,
                sorted(nodes, key=lambda o: o.ts),
                ops,
            )
        )
    return out


def region_tokens(nodes: list[Op]) -> int | None:
    """Tokens a region was captured for: the most common first dimension of the first tensor
    argument of the ops that launch its graph nodes (activations ``[T, ...]`` come first in
    GEMMs, norms, KV stores and attention; weights and embedding tables are the minority)."""
    firsts = []
    for c in nodes:
        o = c.parent
        while o is not None and o.cat != CPU_OP:
            o = o.parent
        if o is None:
            continue
        dims = next(
            (
                d
                for d in o.args.get("Input Dims") or ()
                if isinstance(d, list) and d and all(isinstance(x, int) for x in d)
            ),
            None,
        )
        if dims:
            firsts.append(dims[0])
    return Counter(firsts).most_common(1)[0][0] if firsts else None


def _by_thread(ct: TraceTree) -> dict:
    """(pid, tid) -> (its events by start time, their start times), for :func:`bisect`."""
    th: dict = {}
    for o in ct.ops:
        th.setdefault((o.pid, o.tid), []).append(o)
    out = {}
    for k, v in th.items():
        v.sort(key=lambda o: o.ts)
        out[k] = (v, [o.ts for o in v])
    return out


def _union_by_pid(windows) -> dict:
    """pid -> (starts, stops) of the union of its closed ``(pid, w0, w1)`` windows, by time."""
    by: dict = {}
    for p, w0, w1 in windows:
        by.setdefault(p, []).append((w0, w1))
    out = {}
    for p, iv in by.items():
        merged: list = []
        for w0, w1 in sorted(iv):
            if merged and w0 <= merged[-1][1]:
                merged[-1][1] = max(merged[-1][1], w1)
            else:
                merged.append([w0, w1])
        out[p] = ([a for a, _ in merged], [b for _, b in merged])
    return out


def _sglang(ct: TraceTree, begins, ends, calls, excluded, notes) -> list[Region]:
    out, windows = [], []
    threads = _by_thread(ct)
    for i, b in enumerate(begins):
        w0, w1 = _window(b, ends, b.end)
        windows.append((b.pid, w0, w1))
        evs, starts = threads[(b.pid, b.tid)]  # the pair's thread, by time: one slice per region
        lo, hi = bisect_left(starts, w0), bisect_right(starts, w1 + _EPS)
        ops = [o for o in evs[lo:hi] if o.end <= w1 + _EPS and o is not b]
        nodes = []
        for c in ops:
            if c.cat in LAUNCH and node_kind(c.name):
                if c.kernels:
                    excluded[EAGER] = excluded.get(EAGER, 0) + 1
                else:
                    nodes.append(c)
        bs = region_tokens(nodes)
        out.append(
            Region(
                f"capture {i + 1}/{len(begins)}" + (f" (bs={bs})" if bs else ""),
                SGLANG,
                bs,
                "input shapes of the ops launching its nodes" if bs else "unknown",
                w0,
                w1,
                nodes,
                ops,
            )
        )
    inside = _union_by_pid(windows)
    eager = 0
    for c in calls:
        starts, stops = inside.get(c.pid, ((), ()))
        k = bisect_right(starts, c.ts) - 1
        eager += not (k >= 0 and c.ts <= stops[k])
    if eager:
        why = OUTSIDE + " (SGLang: the eager warm-up forwards before each capture)"
        excluded[why] = excluded.get(why, 0) + eager
    sizes = [r.batch_size for r in out if r.batch_size is not None]
    if any(a <= b for a, b in zip(sizes, sizes[1:])):
        notes.append(f"capture batch sizes {sizes} are not in SGLang's order (largest first)")
    return out


def find_regions(ct: TraceTree, annotation: str | None = None) -> Regions:
    """The capture regions of ``ct`` and the layout they were found in.

    ``annotation`` names one vLLM region. Without it: annotations ``capture_<bs>_...`` or
    annotations enclosing exactly one BeginCapture are vLLM regions; otherwise each
    BeginCapture..EndCapture pair is an SGLang region.

    Kept on ``ct`` per ``annotation`` (a capture tree is read-only once built):
    :func:`~perfreport.tree.graph_capture.load_capture` checks the layout and
    ``merge_graph_capture`` uses the regions, one search for both.
    """
    memo = ct.__dict__.setdefault("_capture_regions", {})
    if annotation not in memo:
        memo[annotation] = _find_regions(ct, annotation)
    return memo[annotation]


def _find_regions(ct: TraceTree, annotation: str | None) -> Regions:
    begins, ends, calls = _calls(ct)
    excluded: dict = {}
    notes: list[str] = []
    # ProfilerStep#<n>: torch.profiler's own step marker (SGLang's per-size files hold one)
    anns = [o for o in ct.ops if o.cat == USER_ANNOTATION and not _STEP.fullmatch(o.name)]
    if annotation is not None:
        anns = [a for a in anns if a.name == annotation]
        return Regions(VLLM if anns else None, _vllm(ct, anns, begins, ends, calls, excluded), excluded, notes)
    inside = lambda a: sum(1 for b in begins if a.ts - _EPS <= b.ts <= a.end + _EPS)
    vllm = [a for a in anns if re.match(r"capture_\d+", a.name)] or [a for a in anns if inside(a) == 1]
    if vllm:
        return Regions(VLLM, _vllm(ct, vllm, begins, ends, calls, excluded), excluded, notes)
    if begins:
        return Regions(SGLANG, _sglang(ct, begins, ends, calls, excluded, notes), excluded, notes)
    return Regions(None, [], excluded, notes)


def pick_region(regions: list[Region], n_events: int, tokens: int | None):
    """(region or None, how it was chosen, problems) for a replay launch of ``n_events`` GPU
    events whose iteration annotation has ``tokens`` tokens (None: unknown)."""
    sized = sorted({r.batch_size for r in regions if r.batch_size is not None})
    fit = [r for r in regions if len(r.nodes) == n_events]
    how, problems = "", []
    if tokens is not None and sized:
        target = next((s for s in sized if s >= tokens), None)
        if target is not None:
            same = [r for r in regions if r.batch_size == target]
            cand = [r for r in same if len(r.nodes) == n_events] or same
            how = (
                f"replay bs={tokens} = captured bs"
                if target == tokens
                else f"replay bs={tokens} padded to captured bs={target}"
            )
            if len(cand[0].nodes) != n_events:
                problems.append(f"{cand[0].name} has {len(cand[0].nodes)} nodes, the replay {n_events} events")
            return cand[0], how, problems
        problems.append(f"replay bs={tokens} exceeds every captured size {sized}")
    if fit:
        how = "by node count" + (" (batch size unknown)" if tokens is None else "")
        if len(fit) > 1:
            problems.append(
                f"{len(fit)} capture regions have {n_events} nodes: used the first ({fit[0].name} @ {fit[0].t0:.3f})"
            )
        return fit[0], how, problems
    if len(regions) == 1:
        return regions[0], "the only region", problems
    problems.append(f"no capture region with {n_events} nodes (have {[(r.name, len(r.nodes)) for r in regions]})")
    return None, "", problems


__all__ = [
    "Region",
    "Regions",
    "find_regions",
    "pick_region",
    "node_kind",
    "region_batch_size",
    "region_tokens",
    "VLLM",
    "SGLANG",
    "LAUNCH",
]
