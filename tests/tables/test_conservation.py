"""The conservation invariant on every trace we have: each GPU event's time counted once.

Σ unified_perf_summary = Σ kernel_summary = Σ ops_summary direct = Σ over (device, stream)
of the union of its GPU events (computed here independently, by merging intervals).
Traces: fixtures/ (all of them, the linking fragments included) and ../shared/traces/
(skipped when that folder is absent; PERFREPORT_SHARED points elsewhere).
"""

from __future__ import annotations

import os
from collections import defaultdict
from pathlib import Path

import pytest

from perfreport.errors import InternalError
from perfreport.pipeline import load_tree
from perfreport.tables import build_sheets
from perfreport.tables.conservation import check_conservation, check_total
from tests.conftest import FIX, ROOT
from tests.kit.cached import analyzed

SHARED = Path(os.environ.get("PERFREPORT_SHARED", ROOT.parent / "shared")) / "traces"


def _fixture_traces():
    # traces: every *.json.gz, and the plain-JSON fragments in linking/ (not configs)
    out = sorted(list(FIX.rglob("*.json.gz")) + list((FIX / "linking").glob("*.json")))
    return [str(p.relative_to(FIX)) for p in out]


def _shared_traces():
    if not SHARED.is_dir():
        return []
    return [str(p.relative_to(SHARED)) for p in sorted(SHARED.rglob("*.json.gz"))]


def _stream_union(tree) -> float:
    """Σ over (device, stream) of the length of the union of its events' intervals."""
    by = defaultdict(list)
    for g in tree.gpu:
        by[(g.device, g.stream)].append((g.ts, g.dur))
    total = 0.0
    for ev in by.values():
        base = min(t for t, _ in ev)  # relative times: absolute µs (1e15) lose ns
        iv = [(t - base, t - base + d) for t, d in ev]
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


def _sum(sheets, name, col, skip=None):
    s = {x.name: x for x in sheets}[name]
    return sum(r[col] for r in s.records() if skip is None or r["name"] != skip)


def _check(path: Path, graph_capture=None):
    # the sheets analyze writes (it raises InternalError on a failed check; the run's one analysis
    # of this trace: tests/kit/cached.py) against the GPU events of the trace's own tree (the
    # passes change no GPU event: not run)
    sheets = analyzed(path, graph_capture=graph_capture).sheets
    tree = load_tree(str(path), graph_capture=graph_capture, passes=False)
    if not tree.gpu:
        return
    want = _stream_union(tree)
    tol = 1e-6 * want
    assert _sum(sheets, "unified_perf_summary", "time sum (µs)") == pytest.approx(want, abs=tol)
    assert _sum(sheets, "kernel_summary", "sum (µs)") == pytest.approx(want, abs=tol)
    assert _sum(sheets, "ops_summary", "direct kernel time (µs)") == pytest.approx(want, abs=tol)
    linked = sum(g.stream_time for g in tree.gpu if g.launcher is not None)
    assert _sum(sheets, "ops_summary", "direct kernel time (µs)", skip="(unlinked GPU events)") == pytest.approx(
        linked, abs=tol
    )


@pytest.mark.parametrize("rel", _fixture_traces())
def test_invariant_on_fixture(rel):
    _check(FIX / rel)


def test_invariant_with_graph_capture_merged():
    _check(FIX / "vllm_decode_graph.json.gz", graph_capture=str(FIX / "vllm_decode_capture"))


@pytest.mark.parametrize("rel", _shared_traces() or ["(none)"])
def test_invariant_on_shared_trace(rel):
    if rel == "(none)":
        pytest.skip(f"shared traces not present at {SHARED}")
    _check(SHARED / rel)


def test_check_total_names_the_difference():
    check_total("x", 100.0, 100.0 + 5e-5)  # within 1e-6 relative
    with pytest.raises(
        InternalError,
        match=r"x sums to 99\.000000 µs, expected 100\.000000 µs "
        r"\(difference -1\.000000 µs\)",
    ):
        check_total("x", 99.0, 100.0)


def test_check_conservation_catches_a_lost_unified_row():
    tree = load_tree(str(FIX / "linking" / "graph_launch_nesting.json"))
    sheets = build_sheets(tree)
    u = {s.name: s for s in sheets}["unified_perf_summary"]
    i = u.columns.index("time sum (µs)")
    u.rows[0][i] -= 2.0  # 2 µs go missing
    with pytest.raises(InternalError, match=r"unified_perf_summary time .*difference -2"):
        check_conservation(sheets, tree)
