"""events.py: Op and GpuEvent read the same whether they hold their own values (constructor) or
live in the tree's shared columns; navigation, perf_meta, launch call and owner of a GPU event."""

from __future__ import annotations

import pytest

from perfreport.events import RUNTIME, GpuEvent, Op
from perfreport.pipeline import load_tree
from tests.kit import X, write_trace


def _op(uid, name, cat="cpu_op", ts=0.0, dur=10.0, **kw):
    return Op(uid, name, cat, 1, 2, ts, dur, **kw)


def test_an_op_holds_its_own_values_and_decodes_bytes_args():
    o = _op(3, "aten::mm", ts=5.0, dur=2.5, args=b'{"Input Dims": [[2, 3]]}', correlation=7, ext_id=9, seq=4)
    assert (o.ts, o.dur, o.end, o.pid, o.tid) == (5.0, 2.5, 7.5, 1, 2)
    assert (o.correlation, o.ext_id, o.seq) == (7, 9, 4)
    assert o.args == {"Input Dims": [[2, 3]]}
    assert _op(1, "x").args == {} and _op(1, "x", args=b"").args == {}


def test_perf_meta_is_written_only_through_set_meta():
    o = _op(1, "aten::mm")
    assert o.perf_meta == {}
    with pytest.raises(TypeError):
        o.perf_meta["k"] = 1  # read-only view until a pass sets a field
    o.set_meta("k", 2)
    assert o.perf_meta == {"k": 2}


def test_walk_ancestors_and_subtree_kernels():
    root, a, b, launch = _op(0, "root"), _op(1, "a"), _op(2, "b"), _op(3, "cudaLaunchKernel", RUNTIME)
    root.children, a.children, b.children, launch.children = [a, b], [launch], [], []
    for c, p in ((a, root), (b, root), (launch, a)):
        c.parent = p
    k1, k2 = (GpuEvent(10 + i, f"k{i}", "kernel", 0, 7, 100.0 + i, 1.0, i) for i in (1, 2))
    a.kernels, launch.kernels, b.kernels = [k1], [k1], [k2]  # the launch call's list repeats a's
    assert [o.name for o in root.walk()] == ["root", "a", "cudaLaunchKernel", "b"]
    assert [o.name for o in launch.ancestors()] == ["a", "root"]
    assert [k.name for k in root.subtree_kernels()] == ["k1", "k2"]  # k1 once


def test_a_gpu_event_made_by_hand():
    g = GpuEvent(1, "gemm", "kernel", 0, 7, 50.0, 4.0, 3, ext_id=8, nbytes=None)
    assert (g.ts, g.dur, g.end, g.stream_time, g.correlation, g.ext_id, g.nbytes) == (50.0, 4.0, 54.0, 4.0, 3, 8, None)
    assert (g.op, g.owner, g.launch_name, g.launch_call) == (None, None, None, None)
    op, call = _op(2, "aten::mm"), _op(3, "cudaLaunchKernel", RUNTIME, ts=1.0, dur=0.5)
    call.parent = op
    g.launcher = call
    assert (g.op, g.owner, g.launch_name, g.launch_call) == (op, op, "cudaLaunchKernel", (1.0, 0.5))


def test_records_in_a_built_tree_read_from_the_columns(tmp_path):
    ev = [
        X("cpu_op", "aten::mm", 0, 50, **{"External id": 12}),
        X("cuda_runtime", "cudaLaunchKernel", 10, 5, correlation=1),
        X("kernel", "gemm", 100, 20, pid=0, tid=7, device=0, stream=7, correlation=1),
        X("kernel", "gemm2", 110, 20, pid=0, tid=7, device=0, stream=7, correlation=2),  # overlaps gemm by 10
        X("cuda_runtime", "cudaLaunchKernel", 20, 5, correlation=2),
    ]
    t = load_tree(write_trace(tmp_path, ev), passes=False)
    (mm,) = t.ops_named("aten::mm")
    assert (mm.ts, mm.dur, mm.ext_id, mm.pid, mm.tid) == (0.0, 50.0, 12, 1, 1)
    g, g2 = sorted(t.gpu, key=lambda e: e.ts)
    assert (g.op, g.owner, g.launch_name, g.launch_call) == (mm, mm, "cudaLaunchKernel", (10.0, 5.0))
    assert (g.stream_time, g2.stream_time) == (20.0, 10.0)  # the overlap is charged to the first
    # a write goes to the tree's columns (a value int64 cannot hold to their side table)
    mm.dur, mm.ext_id, g2.nbytes = 40.0, 1 << 70, 8
    assert (mm.ts, mm.dur, mm.end, mm.ext_id, g2.nbytes, g.nbytes) == (0.0, 40.0, 40.0, 1 << 70, 8, None)
    assert t.ops[0]._src.dur[mm.uid] == 40.0
    mm.ext_id = None
    assert mm.ext_id is None
    with pytest.raises(AttributeError):
        mm.correlation = 3  # an op's shared column holds its sequence number


def test_a_record_is_one_small_object_and_its_category_is_its_class(tmp_path):
    import sys

    o, g = _op(1, "aten::mm"), GpuEvent(1, "gemm", "kernel", 0, 7, 50.0, 4.0, 3)
    # CPython allocates small objects in 16-byte classes: 80 and 64 bytes with the GC header
    assert (sys.getsizeof(o), sys.getsizeof(g)) == (80, 64)
    # a built tree's records read their name and columns from their per-tree class: 64 and 48
    t = load_tree(
        write_trace(
            tmp_path,
            [
                X("cpu_op", "aten::mm", 0, 50),
                X("cuda_runtime", "cudaLaunchKernel", 10, 5, correlation=1),
                X("kernel", "gemm", 100, 20, pid=0, tid=7, device=0, stream=7, correlation=1),
            ],
        ),
        passes=False,
    )
    (mm,), (k,) = t.ops_named("aten::mm"), t.gpu
    assert (sys.getsizeof(mm), sys.getsizeof(k)) == (64, 48) and (mm.name, k.name) == ("aten::mm", "gemm")
    assert isinstance(mm, Op) and isinstance(k, GpuEvent) and type(k).cat == "kernel"
    with pytest.raises(AttributeError):
        mm.name = "aten::add"  # a built tree's names are its code column's
    assert isinstance(o, Op) and type(o) is not Op and type(o) is type(_op(2, "aten::add"))
    assert (o.cat, _op(3, "x", RUNTIME).cat, g.cat) == ("cpu_op", RUNTIME, "kernel")
    with pytest.raises(AttributeError):
        o.cat = RUNTIME  # fixed by the record's class


def test_built_records_read_ids_devices_and_bytes_from_shared_columns(tmp_path):
    ev = [
        X("cpu_op", "aten::copy_", 0, 50, **{"Sequence number": 5}),
        X("cuda_runtime", "cudaMemcpyAsync", 10, 5, correlation=3),
        X("cuda_runtime", "cudaLaunchKernel", 20, 5, correlation=4),
        X("gpu_memcpy", "Memcpy HtoD", 100, 20, pid=1, tid=9, device=1, stream=9, correlation=3, bytes=4096),
        X("kernel", "fill", 130, 2, pid=1, tid=9, device=1, stream=9, correlation=4),
    ]
    t = load_tree(write_trace(tmp_path, ev), passes=False)
    (cp,) = t.ops_named("aten::copy_")
    assert (cp.seq, cp.correlation) == (5, None)  # one column: seq for ops, correlation for calls
    mc, k = sorted(t.gpu, key=lambda e: e.ts)
    assert (mc.device, mc.stream, mc.nbytes, mc.correlation) == (1, 9, 4096, 3)
    assert (k.device, k.stream, k.nbytes, k.stream_time) == (1, 9, None, 2.0)
    assert mc.launch_call == (10.0, 5.0)


def test_a_lone_child_or_kernel_is_kept_without_a_tuple_and_read_as_one(tmp_path):
    """A built tree stores a lone child or kernel in the slot itself (no 48-byte tuple); the
    properties hand out a one-element tuple, and more than one as the tree's exact-size tuple."""
    ev = [
        X("cpu_op", "aten::linear", 0, 100),
        X("cpu_op", "aten::mm", 5, 50),
        X("cuda_runtime", "cudaLaunchKernel", 10, 5, correlation=1),
        X("cpu_op", "aten::add", 60, 30),
        X("cuda_runtime", "cudaLaunchKernel", 61, 5, correlation=2),
        X("cuda_runtime", "cudaLaunchKernel", 70, 5, correlation=3),
        X("kernel", "gemm", 100, 20, pid=0, tid=7, device=0, stream=7, correlation=1),
        X("kernel", "add1", 130, 2, pid=0, tid=7, device=0, stream=7, correlation=2),
        X("kernel", "add2", 140, 2, pid=0, tid=7, device=0, stream=7, correlation=3),
    ]
    t = load_tree(write_trace(tmp_path, ev), passes=False)
    (lin,), (mm,), (add,) = (t.ops_named(n) for n in ("aten::linear", "aten::mm", "aten::add"))
    assert lin.children == (mm, add) and lin._ch.__class__ is tuple
    assert mm._k.__class__ is not tuple and [k.name for k in mm.kernels] == ["gemm"]
    assert mm.kernels.__class__ is tuple and mm.children is None and lin.kernels is None
    assert [k.name for k in add.kernels] == ["add1", "add2"]
    lens, flat = Op.kernels_of([lin, mm, add])
    assert lens == [0, 1, 2] and [k.name for k in flat] == ["gemm", "add1", "add2"]
    mm.kernels = []  # records made or changed later hold lists
    assert mm.kernels == [] and Op.kernels_of([mm]) == ([0], [])
