"""Attribute CUDA/HIP-graph replay kernels to the ops of a capture-time trace.

A replay trace shows one ``hipGraphLaunch``/``cudaGraphLaunch`` owning every kernel of the
graph (same correlation), with no per-op attribution. A capture-time trace, recorded while
the graph was captured, holds the ops (with shapes) and one runtime launch call per graph
node, but no kernels for them (capture does not run them).

Matching rule (vLLM decode example: 421/421, every kernel name equal):
* the capture regions are found by :mod:`perfreport.tree.capture_regions` in vLLM's layout
  (a ``user_annotation`` ``capture_<bs>_<mode>`` per batch size) or SGLang's (one region per
  ``*StreamBeginCapture``..``*StreamEndCapture`` pair, batch size from the input shapes of
  the ops that launch its nodes); a replay takes the region of the tokens of its iteration annotation
  (:func:`step_tokens`), padded up to the next captured size, else the one with its node count;
* a region's graph nodes are its kernel/memcpy/memset calls between BeginCapture and
  EndCapture, by time, minus calls owning GPU events in the capture trace (they ran
  eagerly). vLLM example: 428 launches = 421 nodes + 6 before BeginCapture + 1 after
  EndCapture (warm-up fills, a gather), all 7 with their own kernels;
* a launch's replay events, by start time, are aligned with the nodes: by (kind, kernel
  name) when the capture records names (ROCm ``args.kernel``), disagreements reported and
  left on the launch; without names only equal counts and kinds are paired (unverified).

Each matched launch gets its own copy of the capture ops (uids continue after the existing
ones), their CPU ``ts``/``dur`` mapped *affinely* from the region's time range onto the
launch's ``[ts, end]`` (the region spans tens of ms): nesting is kept and every merged op lies inside any annotation
holding the launch (passes match by time containment). Their CPU times are synthetic;
``args`` (shapes) are the capture's.
"""

from __future__ import annotations

import re
import msgspec
from msgspec import field
from difflib import SequenceMatcher
from pathlib import Path


from perfreport.errors import BadInput
from perfreport.events import KERNEL, USER_ANNOTATION, GpuEvent, Op
from perfreport.read import read_trace
from perfreport.stats.iteration_formats import parse_iteration
from perfreport.tree.capture_regions import (
    _KERNEL_CALL,
    LAUNCH,
    Region,
    find_regions,
    node_kind,
    pick_region,
    region_batch_size,
)
from perfreport.tree.build import build_tree
from perfreport.tree.capture_files import capture_file
from perfreport.tree.trace_tree import TraceTree

GRAPH_LAUNCH = re.compile(r"(hip|cuda|cu)GraphLaunch")
_EPS = 1e-3


class LaunchMatch(msgspec.Struct):
    """One replay graph launch and what it was matched to."""

    launch: str
    ts: float
    events: int
    region: str | None = None
    choice: str = ""  # how the region was chosen (batch size, padding, node count)
    nodes: int = 0
    matched: int = 0
    names_verified: bool = False
    scale: float = 0.0
    problems: list[str] = field(default_factory=list)


class GraphMergeReport(msgspec.Struct):
    launches: list[LaunchMatch] = field(default_factory=list)
    layout: str | None = None  # "vLLM" or "SGLang"
    regions: list[str] = field(default_factory=list)
    excluded: dict[str, int] = field(default_factory=dict)  # capture launches not graph nodes
    ops_added: int = 0
    ops_attributed: int = 0
    notes: list[str] = field(default_factory=list)

    events = property(lambda self: sum(l.events for l in self.launches))
    matched = property(lambda self: sum(l.matched for l in self.launches))
    unmatched = property(lambda self: self.events - self.matched)

    def summary(self) -> str:
        names = ", ".join(sorted({l.region for l in self.launches if l.region})) or "no capture"
        s = f"graph capture: {self.matched}/{self.events} kernels attributed to {self.ops_attributed} ops from {names}"
        if self.unmatched:
            s += f" ({self.unmatched} left on the graph launch)"
        return s + f" ({self.layout} capture layout)"

    def lines(self) -> list[str]:
        out = [self.summary()]
        for l in self.launches:
            v = "names verified" if l.names_verified else "names NOT verified"
            out.append(
                f"  {l.launch} @ {l.ts:.3f}: {l.matched}/{l.events} events, "
                f"{l.nodes} capture nodes in {l.region}"
                + (f" ({l.choice})" if l.choice else "")
                + f", {v}, CPU time x{l.scale:.3g}"
            )
            out += [f"    {p}" for p in l.problems]
        out += [f"  capture launches that are no graph node: {n} ({why})" for why, n in self.excluded.items()]
        return out + [f"  note: {n}" for n in self.notes]


def step_tokens(tree: TraceTree, launch: Op) -> int | None:
    """Tokens of the innermost iteration annotation holding ``launch`` (c_sq + g_sq: the
    padded batch a decode graph is captured for), or None."""
    best = None
    for a in tree.ops:
        if a.cat != USER_ANNOTATION or not (a.ts - _EPS <= launch.ts <= a.end + _EPS):
            continue
        st = parse_iteration(a.name)
        if st is None:
            continue
        n = (st.get("c_sq") or 0) + (st.get("g_sq") or 0)
        if n and (best is None or a.ts >= best[0]):
            best = (a.ts, n)
    return best[1] if best else None


def _align(nodes: list[Op], events: list[GpuEvent], names: dict, m: LaunchMatch):
    """(node index, event index) pairs; problems go to ``m.problems``."""
    kinds = [node_kind(n.name) for n in nodes]
    known = bool(names) and all(names.get(n.correlation) for n, k in zip(nodes, kinds) if k == KERNEL)
    if not known:
        if len(nodes) == len(events) and kinds == [g.cat for g in events]:
            m.problems.append("capture has no kernel names: paired by order and kind only")
            return list(zip(range(len(nodes)), range(len(events))))
        m.problems.append(
            f"{len(nodes)} capture nodes vs {len(events)} replay events and no "
            "kernel names to align them: nothing attributed"
        )
        return []
    m.names_verified = True
    a = [(k, names.get(n.correlation) if k == KERNEL else None) for n, k in zip(nodes, kinds)]
    b = [(g.cat, g.name if g.cat == KERNEL else None) for g in events]
    sm = SequenceMatcher(None, a, b, autojunk=False)
    for tag, i1, i2, j1, j2 in sm.get_opcodes():
        if tag != "equal" and len(m.problems) < 8:  # the first few disagreements
            first = lambda xs, i, j: (xs[i][1] or xs[i][0])[:120] if j > i else "-"
            m.problems.append(
                f"{tag}: capture nodes [{i1}:{i2}] ({first(a, i1, i2)}) vs "
                f"replay events [{j1}:{j2}] ({first(b, j1, j2)})"
            )
    return [(k.a + i, k.b + i) for k in sm.get_matching_blocks() for i in range(k.size)]


def _clone(region: Region, launch: Op, uid0: int):
    span = region.t1 - region.t0
    scale = launch.dur / span if span > 0 else 0.0
    base, t0 = launch.ts, region.t0
    copies = {
        id(o): Op(
            uid0 + i,
            o.name,
            o.cat,
            o.pid,
            o.tid,
            base + (o.ts - t0) * scale,
            o.dur * scale,
            o.args,  # the same (interned) dict, or the shared empty one
            o.correlation,
            o.ext_id,
            o.seq,
        )
        for i, o in enumerate(region.ops)
    }
    roots = []
    for o in region.ops:
        c, p = copies[id(o)], copies.get(id(o.parent))
        if p is None:
            roots.append(c)
        else:
            c.parent = p
            if p.children is None:
                p.children = []
            p.children.append(c)
    return copies, roots, scale


def _add_kernel(o: Op, g: GpuEvent) -> None:
    if o.kernels is None:
        o.kernels = []
    elif o.kernels.__class__ is not list:  # a built tree's exact-size tuple
        o.kernels = list(o.kernels)
    o.kernels.append(g)


def _drop_kernels(o: Op | None, gone: set) -> None:
    if o is not None and o.kernels:
        o.kernels = [g for g in o.kernels if id(g) not in gone] or None


def merge_graph_capture(tree: TraceTree, capture_tree, *, annotation: str | None = None) -> GraphMergeReport:
    """Move each graph launch's GPU events in ``tree`` onto copies of the capture ops.

    ``capture_tree``: one capture tree, or a list of them (SGLang's per-size trace files,
    their regions named by file). Call before :func:`perfreport.passes.run_passes`.
    Unmatched events stay on the launch.
    """
    rep = GraphMergeReport()
    trees = capture_tree if isinstance(capture_tree, list) else [capture_tree]
    regions, names_of, layouts = [], {}, []
    for ct in trees:
        found = find_regions(ct, annotation)
        if annotation is not None and not found.regions:
            raise BadInput(ct.source, f"no user_annotation {annotation!r} in the capture")
        layouts.append(found.layout)
        for why, n in found.excluded.items():
            rep.excluded[why] = rep.excluded.get(why, 0) + n
        rep.notes += found.notes
        for r in found.regions:
            if len(trees) > 1:
                r = r._replace(name=f"{Path(str(ct.source)).name}: {r.name}")
            names_of[id(r)] = getattr(ct, "launch_kernel_names", None) or {}
            regions.append(r)
    rep.layout = "/".join(sorted({str(x) for x in layouts}))
    rep.regions = [r.name for r in regions]
    graph = [o for o in tree.ops if o.cat in LAUNCH and o.kernels and GRAPH_LAUNCH.match(o.name)]
    graph.sort(key=lambda o: o.ts)
    added: list[Op] = []
    owners = set()
    uid = max((o.uid for o in tree.ops), default=-1) + 1
    for launch in graph:
        # its own events (a launch outside any op also lists those of calls nested in it)
        events = sorted((g for g in launch.kernels if g.launcher is launch), key=lambda g: g.ts)
        if not events:
            continue
        owner = events[0].owner
        m = LaunchMatch(launch.name, launch.ts, len(events))
        rep.launches.append(m)
        region, m.choice, m.problems = pick_region(regions, len(events), step_tokens(tree, launch))
        if region is None:
            continue
        m.region, m.nodes = region.name, len(region.nodes)
        pairs = _align(region.nodes, events, names_of[id(region)], m)
        if not pairs:
            continue
        copies, roots, m.scale = _clone(region, launch, uid)
        uid += len(copies)
        added.extend(copies.values())
        tree.roots.extend(roots)
        gone = set()
        for i, j in pairs:
            g, call = events[j], copies[id(region.nodes[i])]
            g.launcher = call
            _add_kernel(call, g)
            if call.parent is not None:
                _add_kernel(call.parent, g)
            owners.add(id(call.parent if call.parent is not None else call))
            gone.add(id(g))
        m.matched = len(pairs)
        _drop_kernels(launch, gone)
        if owner is not launch:
            _drop_kernels(owner, gone)
    if added:
        tree.ops.extend(added)
        tree.ops.sort(key=lambda o: o.ts)
        tree.invalidate_index()
        rep.notes.append(
            "merged ops keep the capture's names and args; their CPU ts/dur are "
            "the capture's, mapped affinely onto their graph launch's time range"
        )
    rep.ops_added = len(added)
    rep.ops_attributed = len(owners)
    return rep


def load_capture(path_or_dir, annotation: str | None = None) -> tuple[TraceTree, str | None]:
    """Read a capture trace: a file, a directory with ``execution_details.json`` (vLLM), a
    directory with one trace, or one of SGLang's per-size sets ``<Runner>_bs_<n>_rank<r>.json.gz``.

    Returns the tree (no passes run; ``launch_kernel_names`` attached; a list of trees for a
    per-size set, largest size first) and the capture annotation's name (None when the file
    holds several and none was chosen).
    """
    p = Path(path_or_dir)
    if p.is_dir():
        p, annotation = capture_file(p, annotation)
        if isinstance(p, list):  # SGLang per-size files: a list of trees
            return [load_capture(f)[0] for f in p], None
    raw = read_trace(str(p), launch_kernels=True)  # one pass: the kernel names come with the events
    named = raw.records.launch_kernels
    tree = build_tree(raw)
    # correlation -> kernel name, from launch calls' args.kernel (ROCm records it; CUDA may not)
    tree.launch_kernel_names = {c: k for c, (call, k) in named.items() if _KERNEL_CALL.match(call)}
    caps = sorted({o.name for o in tree.ops if o.cat == USER_ANNOTATION and o.name.startswith("capture_")})
    if annotation is None and len(caps) == 1:
        annotation = caps[0]
    if annotation is not None and not tree.has_op(annotation):
        raise BadInput(str(p), f"no user_annotation {annotation!r} in the capture trace")
    if annotation is None and find_regions(tree).layout is None:
        raise BadInput(
            str(p),
            "matches no capture layout: neither a user_annotation "
            "capture_<bs>_<mode> (vLLM) nor a hip/cudaStreamBeginCapture.."
            "EndCapture pair (SGLang); record the trace while the graphs are captured",
        )
    return tree, annotation


def apply_capture_option(tree: TraceTree, capture_spec: str) -> str:
    """``--capture PATH[#capture_<bs>_<mode>]``: merge, warn about gaps, return one line."""
    path, annotation = capture_spec, None
    if not Path(path).exists() and "#" in capture_spec:
        path, _, annotation = capture_spec.rpartition("#")
    if not Path(path).exists():
        raise BadInput(capture_spec, "no such capture trace or directory")
    ct, annotation = load_capture(path, annotation)
    rep = merge_graph_capture(tree, ct, annotation=annotation)
    if not rep.launches:
        raise BadInput(capture_spec, "the trace has no hipGraphLaunch/cudaGraphLaunch with GPU events")
    if rep.matched == 0:
        why = next((p for l in rep.launches for p in l.problems), "no kernel matched")
        raise BadInput(capture_spec, f"no graph kernel could be attributed: {why}")
    if rep.unmatched:
        tree.warnings.extend(rep.lines()[1:])
    tree.graph_capture = rep
    return rep.summary()


__all__ = [
    "region_batch_size",
    "step_tokens",
    "GraphMergeReport",
    "LaunchMatch",
    "merge_graph_capture",
    "load_capture",
    "apply_capture_option",
    "node_kind",
]
