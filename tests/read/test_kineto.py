"""Kineto events into columns (perfreport/read/kineto.py, Collector): interned args, the
columns the tree reads, and the records it makes from them."""

from __future__ import annotations


from perfreport.read import read_trace
from tests.conftest import FIX
from tests.read.kit import read_and_build, x_event


def test_interned_args_are_shared():
    raw = read_trace(str(FIX / "h100_qwen_0.5b.json.gz"))
    ops = [o for o in raw.records.cpu if o.cat == "cpu_op"]
    distinct = {id(o.args) for o in ops}
    assert len(ops) == 4186
    assert len(distinct) < 200  # identical argument sets share one dict


_x, _tree = x_event, read_and_build


def test_columns_then_only_what_the_report_needs(tmp_path):
    """The reader keeps columns; the tree makes records for launches, their ancestors and
    annotations, and leaves out kernel-less ops and runtime calls that launch nothing."""
    ev = [
        _x("user_annotation", "step_1", 0, 200),
        _x("cpu_op", "aten::linear", 10, 100, **{"External id": 3, "Input Dims": [[2, 4]]}),
        _x("cpu_op", "aten::t", 12, 2),  # no kernel: dropped
        _x("cuda_runtime", "cudaFuncSetAttribute", 14, 1, correlation=8),  # launches nothing
        _x("cpu_op", "aten::addmm", 20, 50, **{"Sequence number": 9}),
        _x("cuda_runtime", "cudaLaunchKernel", 30, 5, correlation=1),
        _x("cpu_op", "aten::empty", 120, 5),  # no kernel: dropped
        _x("kernel", "gemm", 300, 10, pid=0, tid=7, device=0, stream=7, correlation=1),
    ]
    raw, t = _tree(tmp_path, ev)
    assert raw.counts == (7, 1) and t.n_events == 8
    # the launch call inside aten::addmm gets no record: its kernel links to addmm directly
    assert [o.name for o in t.ops] == ["step_1", "aten::linear", "aten::addmm"]
    assert [o.uid for o in t.ops] == [0, 1, 2]
    ann, linear, addmm = t.ops
    assert t.roots == [ann] and linear.parent is ann and addmm.parent is linear
    assert ann.children == (linear,) and linear.children == (addmm,) and addmm.children is None
    assert list(addmm.kernels) == t.gpu
    assert t.gpu[0].op is addmm and t.gpu[0].launcher is addmm
    assert t.gpu[0].launch_name == "cudaLaunchKernel"
    assert linear.subtree_kernels() == t.gpu and linear.kernels is None
    # scalar fields read from the shared columns
    assert (linear.ts, linear.dur, linear.end, linear.pid, linear.tid) == (10.0, 100.0, 110.0, 1, 1)
    assert linear.ext_id == 3 and linear.seq is None and linear.correlation is None
    assert linear.args == {"Input Dims": [[2, 4]]}
    assert addmm.seq == 9 and addmm.correlation is None
    g = t.gpu[0]
    assert (g.ts, g.dur, g.correlation, g.ext_id, g.nbytes, g.device, g.stream) == (300.0, 10.0, 1, None, None, 0, 7)
    g.dur = 4.0  # a record can still be edited
    assert g.dur == 4.0 and g.ts == 300.0 and g.correlation == 1


def test_cpu_only_trace_keeps_every_cpu_event(tmp_path):
    ev = [
        _x("cpu_op", "aten::linear", 10, 100),
        _x("cpu_op", "aten::t", 12, 2),
        _x("cuda_runtime", "cudaFuncSetAttribute", 14, 1, correlation=8),
    ]
    _, t = _tree(tmp_path, ev)
    assert [o.name for o in t.ops] == ["aten::linear", "aten::t", "cudaFuncSetAttribute"]
    assert [o.parent.name for o in t.ops[1:]] == ["aten::linear", "aten::linear"]
    assert t.ops[2].correlation == 8
