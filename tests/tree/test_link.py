"""Linking for every launch nesting: fixtures for the three nesting cases, worked by hand.

Each fixture is a trace fragment in fixtures/linking/ (one event per line: read it beside
the expected values below). GPU times are integers in µs, so the sums are exact.
"""

from __future__ import annotations


from perfreport.pipeline import load_tree
from perfreport.tables import OpTimes, build_sheets
from tests.conftest import FIX

LINK = FIX / "linking"


def _sheet(sheets, name):
    return {s.name: s for s in sheets}[name]


def _by_name(sheet, key, col):
    out = {}
    for r in sheet.records():
        out[r[key]] = out.get(r[key], 0.0) + r[col]
    return out


def _kernel(tree, name):
    (g,) = [g for g in tree.gpu if g.name == name]
    return g


def test_runtime_enclosing_driver_launch_of_the_same_correlation():
    t = load_tree(str(LINK / "runtime_driver_nesting.json"))
    # sm90_gemm (corr 1): cudaLaunchKernel@10 encloses cuLaunchKernel@15, both corr 1: the
    # innermost (driver) call launched it, aten::mm is its op
    g = _kernel(t, "sm90_gemm")
    assert g.op.name == "aten::mm" and g.launch_name == "cuLaunchKernel"
    assert t.ops_named("aten::mm")[0].kernels == (g,)
    # add_kernel (corr 3): three calls deep (cudaLaunchKernel > cuLaunchKernelEx > cuLaunchKernel)
    g = _kernel(t, "add_kernel")
    assert g.op.name == "aten::add" and g.launch_name == "cuLaunchKernel"
    # fill_kernel (corr 4): cudaLaunchKernel@400 outside any op encloses cuLaunchKernel@405:
    # no op; the outer call owns it (a row under its own name), the inner one launched it
    g = _kernel(t, "fill_kernel")
    assert g.op is None and g.owner.name == "cudaLaunchKernel" and g.owner.parent is None
    assert g.launcher.name == "cuLaunchKernel" and g.launcher.parent is g.owner
    assert _kernel(t, "early_kernel").launcher is None  # corr 99: no launch call

    # every µs once: 25 (mm) + 12 (triton) + 8 (add) + 7 (fill) + 3 (unlinked) = 55
    sheets = build_sheets(t)
    unified = _by_name(_sheet(sheets, "unified_perf_summary"), "name", "time sum (µs)")
    assert unified == {
        "aten::mm": 25,
        "triton_poi_fused_add_0": 12,
        "aten::add": 8,
        "cudaLaunchKernel": 7,
        "(unlinked) early_kernel": 3,
    }
    ops = _by_name(_sheet(sheets, "ops_summary"), "name", "direct kernel time (µs)")
    assert ops == {
        "aten::mm": 25,
        "triton_poi_fused_add_0": 12,
        "aten::add": 8,
        "cudaLaunchKernel": 7,
        "(unlinked GPU events)": 3,
    }
    assert sum(_by_name(_sheet(sheets, "kernel_summary"), "kernel", "sum (µs)").values()) == 55


def test_launches_nested_in_graph_launches():
    t = load_tree(str(LINK / "graph_launch_nesting.json"))
    fwd = t.ops_named("vllm::forward")[0]
    (hip,) = t.ops_named("hipGraphLaunch")
    # corr 10: hipGraphLaunch@10 and the cuLaunchKernel@40 nested in it both carry it: the
    # graph launch owns its 3 kernels (10 + 15 + 4 = 29 µs); their op is vllm::forward
    graph = [g for g in t.gpu if g.correlation == 10]
    assert len(graph) == 3 and all(g.launcher is hip and g.op is fwd for g in graph)
    assert sorted(g.name for g in hip.kernels) == ["graph_attn", "graph_gemm", "graph_norm"]
    # corr 11 / 12: hipLaunchKernel / hipMemcpyAsync nested in the graph launch: their op is
    # the innermost enclosing op (vllm::forward), not the graph launch
    for name, call in (("side_kernel", "hipLaunchKernel"), ("Memcpy HtoD", "hipMemcpyAsync")):
        g = _kernel(t, name)
        assert g.op is fwd and g.launch_name == call
    # direct kernels of vllm::forward: 29 + 5 + 6 = 40 µs
    times = OpTimes(t)
    assert times.direct[fwd.uid] == 40 and times.subtree[fwd.uid] == 40
    ann = t.ops_named("execute_model")[0]
    assert times.direct[ann.uid] == 0 and times.subtree[ann.uid] == 40
    # cudaGraphLaunch@500 outside any op: owns its 2 kernels (20 + 30) and k21 (2), launched
    # by the cudaLaunchKernel nested in it: 52 µs
    (cg,) = t.ops_named("cudaGraphLaunch")
    k21 = _kernel(t, "k21")
    assert k21.op is None and k21.owner is cg and k21.launcher.name == "cudaLaunchKernel"
    assert times.direct[cg.uid] == 52

    # every µs once: 40 + 52 = 92; in the unified table a graph's kernels are a row under
    # their graph launch (shapes unknown without a capture trace): vllm::forward keeps 5 + 6
    sheets = build_sheets(t)
    unified = _by_name(_sheet(sheets, "unified_perf_summary"), "name", "time sum (µs)")
    assert unified == {"vllm::forward": 11, "hipGraphLaunch": 29, "cudaGraphLaunch": 52}
    ks = _sheet(sheets, "kernel_summary").records()
    assert {r["parent op"] for r in ks if r["kernel"] == "k21"} == {"cudaGraphLaunch"}


def test_every_event_twice_is_counted_once():
    t = load_tree(str(LINK / "duplicated_events.json"))
    # 9 distinct events, each written twice: 6 CPU + 3 GPU repeats dropped; the two
    # aten::view calls share name, thread, ts and dur but not External id: both stay
    assert len(t.gpu) == 3
    (w,) = t.warnings
    assert w.startswith("9 duplicate events dropped (6 CPU, 3 GPU")
    assert "50% of the events are repeats" in w  # 9 of 18
    sheets = build_sheets(t)
    unified = _by_name(_sheet(sheets, "unified_perf_summary"), "name", "time sum (µs)")
    assert unified == {"aten::mm": 40, "aten::add": 10, "(unlinked) early": 5}  # 55 µs
    assert len(t.ops_named("aten::mm")) == 1


def test_duplicate_rows_keeps_the_first_and_needs_every_key_equal():
    import numpy as np
    from perfreport.tree.dedup import duplicate_rows

    ts = np.array([5.0, 1.0, 5.0, 5.0, 1.0])
    ids = np.array([1, 2, 1, 3, 9])
    # row 2 repeats row 0; row 3 has another id; row 4 shares ts with row 1 only
    assert duplicate_rows([ts, ids]).tolist() == [False, False, True, False, False]


def test_a_few_repeats_warn_without_calling_the_trace_a_repeat():
    from perfreport.tree.dedup import duplicates_warning

    assert duplicates_warning(0, 0, 10) is None
    w = duplicates_warning(1, 1, 100)  # 2 of 100: 2%
    assert w.startswith("2 duplicate events dropped") and "repeats" not in w


def test_cli_reports_a_failed_conservation_check_as_internal_error(monkeypatch, tmp_path):
    """A sheet that loses a row must end the run with exit 1 naming the difference."""
    from typer.testing import CliRunner
    import perfreport.tables as tables
    from perfreport.cli.app import app

    real = tables.kernel_summary

    def lossy(tree, total, *rest):
        s = real(tree, total, *rest)
        s.rows = s.rows[1:]  # drop the largest row: 25 µs of sm90_gemm
        return s

    monkeypatch.setattr(tables, "kernel_summary", lossy)
    r = CliRunner().invoke(
        app, ["analyze", str(LINK / "runtime_driver_nesting.json"), "-q", "-o", str(tmp_path / "o.xlsx")]
    )
    assert r.exit_code == 1
    assert "kernel_summary sums to 30.000000 µs, expected 55.000000 µs" in r.output
    assert "difference -25.000000" in r.output
    assert not (tmp_path / "o.xlsx").exists()


def test_cli_warns_about_repeats_and_exits_0(tmp_path):
    from typer.testing import CliRunner
    from perfreport.cli.app import app

    r = CliRunner().invoke(app, ["analyze", str(LINK / "duplicated_events.json"), "-q", "-o", str(tmp_path / "o.xlsx")])
    assert r.exit_code == 0
    assert "warning: 9 duplicate events dropped" in r.output


def test_repeats_keep_collective_kernel_args_on_their_kernel():
    import io
    import json

    kern = lambda name, ts, corr, **extra: {
        "ph": "X",
        "cat": "kernel",
        "name": name,
        "pid": 0,
        "tid": 7,
        "ts": ts,
        "dur": 5,
        "args": {"device": 0, "stream": 7, "correlation": corr, **extra},
    }
    a = kern("gemm", 100, 1)
    b = kern("ncclDevKernel_AllReduce_Sum_bf16_RING_LL", 200, 2, **{"Collective name": "allreduce", "Seq": 3})
    t = load_tree(io.BytesIO(json.dumps({"traceEvents": [a, a, b, b]}).encode()))
    assert len(t.gpu) == 2  # 2 repeats dropped: rows 1 and 3
    ((uid, args),) = t.gpu_comm_args.items()
    (g,) = [g for g in t.gpu if g.uid == uid]
    assert g.name.startswith("ncclDevKernel") and args["Seq"] == 3


def test_merge_same_name_in_chunks_and_in_place(monkeypatch):
    import numpy as np

    from perfreport.read.schema import C_CPU_OP, C_RUNTIME
    from perfreport.tree import link

    monkeypatch.setattr(link, "CHUNK", 2)  # several chunks on a tiny table
    # rows: 0 div > 1 div > 2 div > 3 launch; 4 mm > 5 add (no merge)
    cat = np.array([C_CPU_OP, C_CPU_OP, C_CPU_OP, C_RUNTIME, C_CPU_OP, C_CPU_OP], dtype=np.int8)
    name = np.array([7, 7, 7, 9, 1, 2], dtype=np.int32)
    parent = np.array([-1, 0, 1, 2, -1, 4], dtype=np.int32)
    same, newp, rep = link.merge_same_name(cat, name, parent)
    assert newp is parent  # updated in place
    assert same.tolist() == [False, True, True, False, False, False]
    assert parent.tolist() == [-1, 0, 0, 0, -1, 4]  # the launch moves to the outermost div
    rows, into = rep
    assert rows.tolist() == [1, 2] and into.tolist() == [0, 0]
    r = np.array([2, -1, 5, 1])
    assert link.merged_into(rep, r).tolist() == [0, -1, 5, 0]
    assert link.merge_same_name(cat[4:], name[4:], np.array([-1, 0], dtype=np.int32))[2] is None
