"""Graph replay kernels attributed to the ops of the capture-time trace (vLLM decode, MI300X).

The replay's one ``hipGraphLaunch`` owns 421 kernels; the trimmed capture trace
(``fixtures/vllm_decode_capture/``, made by ``scripts/trim_capture_trace.py``) holds 421
launch calls between hipStreamBeginCapture and hipStreamEndCapture, with kernel names.
After the merge, per-op direct kernel time equals the reference tool's, which attributed
the same kernels to the same capture ops.
"""

from __future__ import annotations

import pytest

from perfreport.errors import BadInput
from perfreport.events import KERNEL, RUNTIME
from perfreport.passes import run_passes
from perfreport.pipeline import load_tree
from perfreport.tables import OpTimes, build_sheets
from perfreport.tables.ops import ops_summary
from perfreport.tables.perf_groups import collect_units
from perfreport.tree.graph_capture import apply_capture_option, load_capture, merge_graph_capture
from tests.conftest import FIX

REPLAY = str(FIX / "vllm_decode_graph.json.gz")
CAPTURE_DIR = FIX / "vllm_decode_capture"
CAPTURE_FILE = next(CAPTURE_DIR.glob("*.pt.trace.json.gz"))


@pytest.fixture(scope="module")
def capture():
    return load_capture(CAPTURE_DIR)


def replay():
    return load_tree(REPLAY, passes=False)


@pytest.fixture(scope="module")
def merged(capture):
    tree = replay()
    total = sum(g.dur for g in tree.gpu)
    n_before = len(tree.ops)
    rep = merge_graph_capture(tree, capture[0], annotation=capture[1])
    run_passes(tree)
    return tree, rep, total, n_before


def test_load_capture_dir_and_file(capture):
    ct, ann = capture
    assert ann == "capture_32_FULL"
    assert len(ct.launch_kernel_names) == 428  # 421 graph nodes + 7 eager launches
    ct2, ann2 = load_capture(CAPTURE_FILE)  # a file: the one capture_* annotation
    assert ann2 == "capture_32_FULL" and len(ct2.ops) == len(ct.ops)


def test_capture_file_read_once(monkeypatch):
    """The events and the launch calls' kernel names come from one pass over the capture file
    (it was read twice: once for the tree, once more for ``args.kernel``)."""
    from perfreport.read import source

    opened = []
    real = source.Source.__init__

    def counted(self, spec, *a, **k):
        opened.append(str(spec))
        real(self, spec, *a, **k)

    monkeypatch.setattr(source.Source, "__init__", counted)
    ct, _ = load_capture(CAPTURE_FILE)
    assert opened == [str(CAPTURE_FILE)]
    assert len(ct.launch_kernel_names) == 428


def test_every_graph_kernel_matched_by_name(merged):
    tree, rep, _, _ = merged
    assert (rep.events, rep.matched, rep.unmatched) == (421, 421, 0)
    (m,) = rep.launches
    assert m.region == "capture_32_FULL" and m.nodes == 421 and m.names_verified
    assert not m.problems
    # 7 kernel launches (6 before BeginCapture, 1 after EndCapture) + 3 hipMemcpyAsync
    assert rep.excluded == {"outside StreamBeginCapture..StreamEndCapture": 10}
    launch = tree.ops_named("hipGraphLaunch")[0]
    assert not launch.kernels and not (launch.parent and launch.parent.kernels)
    for g in tree.gpu:
        if g.correlation == launch.correlation:
            assert g.launcher.cat == RUNTIME and g.launcher.name != "hipGraphLaunch"
            assert g in g.launcher.kernels and g in g.launcher.parent.kernels
    assert rep.summary() == (
        "graph capture: 421/421 kernels attributed to "
        f"{rep.ops_attributed} ops from capture_32_FULL (vLLM capture layout)"
    )
    assert m.choice == "replay bs=32 = captured bs"


def test_direct_kernel_time_per_op_matches_reference(merged):
    import pandas as pd  # here, not at collection (0.5 CPU s a pytest-xdist worker)

    tree = merged[0]
    ours = ops_summary(tree, OpTimes(tree)).df.set_index("name")
    ref = pd.read_csv(FIX / "reference" / "vllm_decode_graph" / "ops_summary.csv")
    assert len(ref) == 16
    for _, r in ref.iterrows():
        assert ours.loc[r["name"], "direct kernel time (µs)"] == pytest.approx(
            r["total_direct_kernel_time_sum"], abs=0.01
        ), r["name"]
        assert ours.loc[r["name"], "count"] == r["Count"], r["name"]


def test_every_kernel_counted_once(merged):
    tree, _, total, _ = merged
    assert sum(g.dur for g in tree.gpu) == pytest.approx(total, abs=1e-6)
    seen = [g for _, _, ks, _ in collect_units(tree) for g in ks]
    assert len(seen) == len({id(g) for g in seen}) == len(tree.gpu)
    times = OpTimes(tree)
    owners = [o for o in tree.ops if o.kernels and (o.cat not in ("cuda_runtime", "cuda_driver") or o.parent is None)]
    assert sum(times.direct[o.uid] for o in owners) == pytest.approx(total, abs=1e-6)


def test_uids_and_times_of_merged_ops(merged):
    tree, rep, _, n_before = merged
    assert len(tree.ops) == n_before + rep.ops_added
    assert sorted(o.uid for o in tree.ops) == list(range(len(tree.ops)))
    assert all(a.ts <= b.ts for a, b in zip(tree.ops, tree.ops[1:]))
    launch = tree.ops_named("hipGraphLaunch")[0]
    (ann,) = tree.ops_named("capture_32_FULL")
    assert ann.parent is None and ann in tree.roots
    assert ann.ts == launch.ts and ann.end == pytest.approx(launch.end, abs=1e-3)
    # mapped into the launch's range: the replay's iteration annotation reaches them
    att = tree.ops_named("vllm::unified_attention_with_output")
    assert len(att) == 24
    for o in att:
        assert launch.ts <= o.ts and o.end <= launch.end + 1e-3
        assert o.perf_meta["iteration"]["g_sk"] == 55086
        assert o.args.get("Input Dims")  # shapes from the capture


def test_report_sheets_build(merged):
    names = [s.name for s in build_sheets(merged[0])]
    assert "unified_perf_summary" in names


def test_name_mismatch_is_reported_not_guessed(capture):
    ct, ann = capture
    names = dict(ct.launch_kernel_names)
    node = next(o for o in ct.ops if o.name == "hipModuleLaunchKernel" and not o.kernels)
    ct.launch_kernel_names = {**names, node.correlation: "some_other_kernel"}
    try:
        tree = replay()
        rep = merge_graph_capture(tree, ct, annotation=ann)
    finally:
        ct.launch_kernel_names = names
    assert (rep.matched, rep.unmatched) == (420, 1)
    assert any(p.startswith("replace") for p in rep.launches[0].problems)
    launch = tree.ops_named("hipGraphLaunch")[0]
    assert len(launch.kernels) == 1 and launch.kernels[0].cat == KERNEL


def test_without_kernel_names_pairs_by_order_and_says_so(capture):
    ct, ann = capture
    names = ct.launch_kernel_names
    ct.launch_kernel_names = {}
    try:
        rep = merge_graph_capture(replay(), ct, annotation=ann)
    finally:
        ct.launch_kernel_names = names
    assert rep.matched == 421 and not rep.launches[0].names_verified
    assert "paired by order" in rep.launches[0].problems[0]


def test_apply_capture_option():
    tree = replay()
    line = apply_capture_option(tree, str(CAPTURE_DIR))
    assert line.startswith("graph capture: 421/421 kernels attributed to ")
    assert line.endswith(" ops from capture_32_FULL (vLLM capture layout)")
    assert apply_capture_option(replay(), f"{CAPTURE_DIR}#capture_32_FULL") == line


@pytest.mark.parametrize(
    "spec", [f"{CAPTURE_DIR}#capture_64_FULL", "/nonexistent/capture", f"{CAPTURE_FILE}#capture_64_FULL"]
)
def test_apply_capture_option_bad_input(spec):
    with pytest.raises(BadInput):
        apply_capture_option(replay(), spec)


def test_apply_capture_option_needs_a_graph_launch():
    tree = load_tree(str(FIX / "cpu_block.json.gz"), passes=False)
    with pytest.raises(BadInput, match="no hipGraphLaunch"):
        apply_capture_option(tree, str(CAPTURE_DIR))
