"""Tree: nesting by time, linking by correlation / flows / External id, graphs, unlinked."""

from __future__ import annotations


from perfreport.pipeline import load_tree
from tests.conftest import FIX
from tests.kit import X, write_trace


_write = write_trace


def test_nesting_and_direct_vs_subtree(tmp_path):
    ev = [
        X("cpu_op", "aten::linear", 0, 100),
        X("cpu_op", "aten::addmm", 10, 50),
        X("cuda_runtime", "cudaLaunchKernel", 20, 5, correlation=1),
        X("cuda_runtime", "cudaLaunchKernel", 30, 5, correlation=2),
        X("cuda_runtime", "cudaLaunchKernel", 70, 5, correlation=3),  # direct child of linear
        X("kernel", "k1", 200, 10, pid=0, tid=7, device=0, stream=7, correlation=1),
        X("kernel", "k2", 210, 20, pid=0, tid=7, device=0, stream=7, correlation=2),
        X("kernel", "k3", 240, 4, pid=0, tid=7, device=0, stream=7, correlation=3),
        X("kernel", "orphan", 250, 1, pid=0, tid=7, device=0, stream=7, correlation=42),
    ]
    t = load_tree(_write(tmp_path, ev))
    linear = t.ops_named("aten::linear")[0]
    addmm = t.ops_named("aten::addmm")[0]
    assert addmm.parent is linear
    assert [k.name for k in addmm.kernels] == ["k1", "k2"]
    assert [k.name for k in linear.kernels] == ["k3"]
    assert sorted(k.name for k in linear.subtree_kernels()) == ["k1", "k2", "k3"]
    assert [g.name for g in t.unlinked] == ["orphan"]
    assert t.gpu[0].op is addmm

    from perfreport.tables import OpTimes

    times = OpTimes(t)
    assert times.direct[linear.uid] == 4 and times.subtree[linear.uid] == 34
    assert times.direct[addmm.uid] == 30 and times.subtree[addmm.uid] == 30


def test_threads_nest_separately(tmp_path):
    ev = [X("cpu_op", "a", 0, 100, tid=1), X("cpu_op", "b", 10, 10, tid=2)]
    t = load_tree(_write(tmp_path, ev))
    assert t.ops_named("b")[0].parent is None


def test_flow_fallback_when_kernel_has_no_correlation(tmp_path):
    ev = [
        X("cpu_op", "aten::mul", 0, 50),
        X("cuda_runtime", "cudaLaunchKernel", 10, 5),
        {"ph": "s", "cat": "ac2g", "name": "ac2g", "id": 5, "pid": 1, "tid": 1, "ts": 10},
        {"ph": "f", "cat": "ac2g", "name": "ac2g", "id": 5, "pid": 0, "tid": 7, "ts": 100, "bp": "e"},
        X("kernel", "mul_kernel", 100, 3, pid=0, tid=7, device=0, stream=7),
    ]
    t = load_tree(_write(tmp_path, ev))
    assert t.gpu[0].op.name == "aten::mul"


def test_external_id_fallback_without_runtime_event(tmp_path):
    ev = [
        {**X("cpu_op", "aten::add", 0, 50), "args": {"External id": 77}},
        X("kernel", "add_kernel", 100, 3, pid=0, tid=7, device=0, stream=7, correlation=5, **{"External id": 77}),
    ]
    t = load_tree(_write(tmp_path, ev))
    add = t.ops_named("aten::add")[0]
    assert t.gpu[0].op is add and add.kernels == (t.gpu[0],)  # an exact-size tuple
    assert add.subtree_kernels() == [t.gpu[0]]


def test_hip_graph_launch_owns_all_its_kernels():
    t = load_tree(str(FIX / "vllm_decode_graph.json.gz"))
    g = t.ops_named("hipGraphLaunch")
    assert len(g) == 1
    assert len(g[0].kernels) == 421
    assert all(k.correlation == g[0].correlation for k in g[0].kernels)


def test_rocm_launch_names_link(mi300_tree):
    # the launch call's name, whether or not the call has a record of its own
    names = {g.launch_name for g in mi300_tree.gpu if g.launcher is not None}
    assert {"hipLaunchKernel", "hipExtModuleLaunchKernel", "hipModuleLaunchKernel"} <= names


def test_every_kernel_is_either_linked_or_unlinked(h100_tree):
    linked = sum(1 for g in h100_tree.gpu if g.launcher is not None)
    assert linked + len(h100_tree.unlinked) == len(h100_tree.gpu) == 1707
    # a kernel is in its launcher's list, was launched by a runtime call, and is the direct
    # kernel of exactly one owner (an op, or a runtime call outside any op)
    for g in h100_tree.gpu:
        if g.launcher is not None:
            assert any(k is g for k in g.launcher.kernels)
            assert g.launch_name and g.launch_name.startswith("cu")
    owned = [
        id(k)
        for o in h100_tree.ops
        if o.kernels and (o.cat not in ("cuda_runtime", "cuda_driver") or o.parent is None)
        for k in o.kernels
    ]
    assert len(owned) == len(set(owned)) == linked
