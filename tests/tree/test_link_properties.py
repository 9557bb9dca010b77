"""Property test: random traces, every GPU event counted once and attributed to the innermost
op around its launch call.

A generated trace has 1-3 CPU threads, each a forest of cpu_ops (names from a small pool,
so an op often nests in one of the same name), user annotations, runtime and driver launch
calls nested in ops, in each other (a nested call may carry its parent's correlation, as
``cudaLaunchKernel`` > ``cuLaunchKernel`` does) and in graph launches, now and then an op
nested in a launch call; GPU events (kernels, memcpy, memset) on two streams at random
times (so some overlap on one stream); unlinked events (a correlation no call has, or none);
and exact repeats of random events. The expected attribution is worked out here from the
generated structure alone:

* launch call of an event = among the calls with its correlation, the graph launch if any,
  else the innermost (the generator puts the calls of one correlation on one chain);
* its op = the first enclosing event that is no launch call; a cpu_op directly inside a
  cpu_op of the same name is that op (one call);
* its owner = that op, or the outermost launch call when there is none.

Checked: ``GpuEvent.op`` / ``owner`` against that, each event in exactly one owner's kernels,
repeats dropped (and counted in the warning), and the conservation sums (Σ unified =
Σ kernel_summary = Σ ops direct = Σ per stream of the union of its events, worked out here).
"""

from __future__ import annotations

import io
import json
from collections import defaultdict

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from perfreport.pipeline import load_tree
from perfreport.tables import build_sheets

OPS = ("aten::mm", "aten::add", "aten::div")
RUNTIME = ("cudaLaunchKernel", "hipLaunchKernel", "cudaMemcpyAsync")
GRAPH = ("cudaGraphLaunch", "hipGraphLaunch")
DRIVER = ("cuLaunchKernel", "cuLaunchKernelEx")
LAUNCH = ("rt", "drv")


class Node:
    def __init__(self, kind, name, corr=None, graph=False):
        self.kind, self.name, self.corr, self.graph = kind, name, corr, graph
        self.children: list[Node] = []
        self.parent: Node | None = None
        self.ts = self.dur = 0
        self.tid = 0


@st.composite
def forest(draw, counter, depth=0, parent=None):
    """A list of sibling nodes under ``parent`` (None: roots of a thread)."""
    nodes = []
    same_corr_used = False
    for _ in range(draw(st.integers(0, 3 if depth < 3 else 0))):
        in_launch = parent is not None and parent.kind in LAUNCH
        if in_launch:
            kind = draw(st.sampled_from(["drv", "drv", "rt", "op"]))
        else:
            kind = draw(st.sampled_from(["op", "op", "rt", "rt", "drv", "ann"]))
        if kind in ("op", "ann"):
            name = (
                draw(st.sampled_from(OPS))
                if kind == "op"
                else draw(st.sampled_from(("execute_model", "## forward ##")))
            )
            n = Node(kind, name)
        else:
            graph = kind == "rt" and draw(st.integers(0, 3)) == 0
            name = draw(st.sampled_from(GRAPH if graph else (RUNTIME if kind == "rt" else DRIVER)))
            if in_launch and not same_corr_used and draw(st.booleans()):
                corr = parent.corr  # one call of the parent's correlation per level
                same_corr_used = True
            else:
                counter[0] += 1
                corr = counter[0]
            n = Node(kind, name, corr, graph or "GraphLaunch" in name)
        n.parent = parent
        n.children = draw(forest(counter, depth + 1, n))
        nodes.append(n)
    return nodes


def _layout(n: Node, t: int, tid: int) -> int:
    """Children strictly inside their parent, one µs apart: every ts distinct on a thread."""
    n.ts, n.tid = t, tid
    cur = t + 1
    for c in n.children:
        cur = _layout(c, cur, tid) + 1
    n.dur = cur - t
    return cur


def _walk(nodes):
    for n in nodes:
        yield n
        yield from _walk(n.children)


def _expected_launch(calls: list[Node]) -> Node:
    graphs = [c for c in calls if c.graph]
    pool = graphs or calls

    def depth(n):
        d = 0
        while n.parent is not None:
            n, d = n.parent, d + 1
        return d

    return max(pool, key=depth)


def _expected_op(call: Node) -> Node | None:
    n = call
    while n is not None and n.kind in LAUNCH:
        n = n.parent
    while (
        n is not None and n.kind == "op" and n.parent is not None and n.parent.kind == "op" and n.parent.name == n.name
    ):
        n = n.parent  # aten::div inside aten::div: one call
    return n


def _expected_owner(call: Node) -> Node:
    op = _expected_op(call)
    if op is not None:
        return op
    n = call
    while n.parent is not None:
        n = n.parent
    return n


def _cpu_event(n: Node) -> dict:
    cat = {"op": "cpu_op", "ann": "user_annotation", "rt": "cuda_runtime", "drv": "cuda_driver"}[n.kind]
    args = {"correlation": n.corr} if n.corr is not None else {}
    return {"ph": "X", "cat": cat, "name": n.name, "pid": 1, "tid": n.tid, "ts": n.ts, "dur": n.dur, "args": args}


@st.composite
def traces(draw):
    counter = [0]
    roots_by_thread = []
    t = 0
    for tid in range(1, draw(st.integers(1, 3)) + 1):
        roots = draw(forest(counter))
        t0 = 0
        for r in roots:
            t0 = _layout(r, t0, tid) + 2
        roots_by_thread.append(roots)
        t = max(t, t0)
    nodes = [n for roots in roots_by_thread for n in _walk(roots)]
    calls = [n for n in nodes if n.kind in LAUNCH]
    # GPU events: per correlation 0-3 (graph: 1-4), plus unlinked ones
    gpu_specs = []
    for corr in sorted({c.corr for c in calls}):
        graph = any(c.graph for c in calls if c.corr == corr)
        for _ in range(draw(st.integers(1 if graph else 0, 4 if graph else 3))):
            gpu_specs.append(corr)
    gpu_specs += [10_000 + i for i in range(draw(st.integers(0, 2)))]  # no such call
    gpu_specs += [None] * draw(st.integers(0, 1))  # no correlation
    n = len(gpu_specs)
    starts = draw(st.lists(st.integers(0, 40 * n + 10), min_size=n, max_size=n, unique=True))
    gpu = []
    for i, (corr, ts) in enumerate(zip(gpu_specs, starts)):
        cat = draw(st.sampled_from(["kernel", "kernel", "kernel", "gpu_memcpy", "gpu_memset"]))
        stream = draw(st.sampled_from([7, 8]))
        args = {"device": 0, "stream": stream}
        if corr is not None:
            args["correlation"] = corr
        gpu.append(
            {
                "ph": "X",
                "cat": cat,
                "name": f"k{i}",
                "pid": 0,
                "tid": stream,
                "ts": 100_000 + ts,
                "dur": draw(st.integers(1, 60)),
                "args": args,
            }
        )
    events = [_cpu_event(x) for x in nodes] + gpu
    order = draw(st.permutations(range(len(events))))
    events = [events[i] for i in order]
    reps = draw(st.lists(st.integers(0, max(len(events) - 1, 0)), max_size=4, unique=True)) if events else []
    events += [dict(events[i]) for i in reps]
    return nodes, calls, gpu, len(reps), events


def _union(gpu: list[dict]) -> float:
    by = defaultdict(list)
    for e in gpu:
        by[e["args"]["stream"]].append((e["ts"], e["ts"] + e["dur"]))
    total = 0
    for iv in by.values():
        iv.sort()
        s, e = iv[0]
        for a, b in iv[1:]:
            if a > e:
                total += e - s
                s, e = a, b
            else:
                e = max(e, b)
        total += e - s
    return total


@settings(
    max_examples=60,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(traces())
def test_random_traces_count_every_event_once(case):
    nodes, calls, gpu, n_reps, events = case
    if not events:
        return
    doc = {"traceEvents": events}
    tree = load_tree(io.BytesIO(json.dumps(doc).encode()))
    assert len(tree.gpu) == len(gpu)  # repeats dropped
    if n_reps:
        assert any(w.startswith(f"{n_reps} duplicate events dropped") for w in tree.warnings)
    else:
        assert not any("duplicate" in w for w in tree.warnings)

    rec = {(o.tid, o.ts, o.name): o for o in tree.ops}

    def record(n: Node | None):
        return None if n is None else rec[(n.tid, float(n.ts), n.name)]

    by_corr = defaultdict(list)
    for c in calls:
        by_corr[c.corr].append(c)
    spec = {e["name"]: e for e in gpu}
    for g in tree.gpu:
        corr = spec[g.name]["args"].get("correlation")
        if corr not in by_corr:
            assert g.launcher is None and g.op is None, g
            continue
        call = _expected_launch(by_corr[corr])
        assert g.op is record(_expected_op(call)), (g, call.name)
        assert g.owner is record(_expected_owner(call)), (g, call.name)
        assert g.launch_name == call.name

    owned = [
        id(k)
        for o in tree.ops
        if o.kernels and (o.cat not in ("cuda_runtime", "cuda_driver") or o.parent is None)
        for k in o.kernels
    ]
    assert len(owned) == len(set(owned)) == sum(g.launcher is not None for g in tree.gpu)

    if not gpu:
        return
    sheets = {s.name: s for s in build_sheets(tree)}  # runs check_conservation
    want = _union(gpu)
    unified = sum(r["time sum (µs)"] for r in sheets["unified_perf_summary"].records())
    assert unified == pytest.approx(want, abs=1e-9)
    assert sum(r["sum (µs)"] for r in sheets["kernel_summary"].records()) == pytest.approx(want, abs=1e-9)
    direct = sum(r["direct kernel time (µs)"] for r in sheets["ops_summary"].records())
    assert direct == pytest.approx(want, abs=1e-9)
