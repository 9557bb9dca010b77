"""Stage 2: nest CPU events per (pid, tid) and link GPU events to their launches.

Linking, in order of preference:
1. ``correlation``: a GPU event's ``args.correlation`` equals the runtime call's. A graph
   launch (``cudaGraphLaunch`` / ``hipGraphLaunch``) owns every GPU event with its
   correlation (hundreds per launch).
2. ``ac2g`` flows, for GPU events without ``correlation``: the flow that ends on the GPU
   event (same pid, tid, ts) names the flow start, a runtime call at (pid, tid, ts).
3. ``External id``: a GPU event whose External id equals a cpu_op's is owned by that op
   (used only when the trace has no runtime event for it).
A GPU event none of these claim is *unlinked*: it stays in ``tree.gpu`` (and so in the
timeline) and is reported in its own rows.
"""
from __future__ import annotations

from collections import defaultdict

from perfreport.events import CPU_OP, DRIVER, RUNTIME, USER_ANNOTATION, GpuEvent, Op
from perfreport.read import RawTrace
from perfreport.tree.trace_tree import TraceTree

_LAUNCH_CATS = (RUNTIME, DRIVER)


def build_tree(raw: RawTrace) -> TraceTree:
    col = raw.records
    ops = col.cpu
    gpu = col.gpu
    roots = _nest(ops)
    _link(ops, gpu, col)
    ops.sort(key=lambda o: o.ts)
    gpu.sort(key=lambda g: g.ts)
    tree = TraceTree(raw.source, raw.meta, ops, gpu, col.gpu_annotations, roots)
    tree.process_names = col.process_names
    tree.process_labels = col.process_labels
    tree.thread_names = col.thread_names
    tree.n_events = col.n_events
    return tree


def _nest(ops: list[Op]) -> list[Op]:
    """Nest by time per (pid, tid); a longer event starting at the same ts is the parent."""
    roots: list[Op] = []
    by_thread: dict = defaultdict(list)
    for o in ops:
        by_thread[(o.pid, o.tid)].append(o)
    for evs in by_thread.values():
        evs.sort(key=lambda o: (o.ts, -o.dur))
        stack: list[Op] = []
        for o in evs:
            ts = o.ts
            while stack and stack[-1].ts + stack[-1].dur <= ts:
                stack.pop()
            if stack:
                p = stack[-1]
                o.parent = p
                if p.children is None:
                    p.children = [o]
                else:
                    p.children.append(o)
            else:
                roots.append(o)
            if o.dur > 0 or o.cat != RUNTIME:
                stack.append(o)
    return roots


def _link(ops: list[Op], gpu: list[GpuEvent], col) -> None:
    by_corr: dict[int, Op] = {}
    for o in ops:
        if o.correlation is not None and o.cat in _LAUNCH_CATS:
            by_corr[o.correlation] = o
    by_start = None
    by_ext = None
    for g in gpu:
        launcher = by_corr.get(g.correlation) if g.correlation is not None else None
        if launcher is None and g.correlation is None and col.flows_end:
            if by_start is None:
                by_start = {(o.pid, o.tid, o.ts): o for o in ops if o.cat in _LAUNCH_CATS}
            fid = col.flows_end.get((g.device, g.stream, g.ts))
            st = col.flows_start.get(fid) if fid is not None else None
            launcher = by_start.get(st) if st is not None else None
        if launcher is None and g.ext_id is not None and g.correlation not in by_corr:
            if by_ext is None:
                by_ext = {o.ext_id: o for o in ops
                          if o.ext_id is not None and o.cat in (CPU_OP, USER_ANNOTATION)}
            launcher = by_ext.get(g.ext_id)
        if launcher is None:
            continue
        g.launcher = launcher
        if launcher.kernels is None:
            launcher.kernels = [g]
        else:
            launcher.kernels.append(g)
        # the launching op's direct kernels
        owner = launcher.parent if launcher.cat in _LAUNCH_CATS else None
        if owner is not None:
            if owner.kernels is None:
                owner.kernels = [g]
            else:
                owner.kernels.append(g)
