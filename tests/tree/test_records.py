"""tree/records.py: the build's records read their fields from the shared columns at their uid."""

from __future__ import annotations

from array import array

from perfreport.events import Columns, GpuEvent, Op
from perfreport.tree.records import make_gpu, make_ops


def test_ops_read_the_columns_at_their_uid_and_share_one_class_per_category():
    cols = Columns(ts=array("d", [1.0, 2.5, 4.0]), dur=array("d", [9.0, 0.5, 1.0]))
    names, cats = ["aten::mm", "cudaLaunchKernel"], ["cpu_op", "cuda_runtime"]
    ops = make_ops([0, 1, 2], [0, 1, 0], [0, 1, 0], names, cats, cols)
    assert [(o.uid, o.name, o.cat, o.ts, o.dur) for o in ops] == [
        (0, "aten::mm", "cpu_op", 1.0, 9.0),
        (1, "cudaLaunchKernel", "cuda_runtime", 2.5, 0.5),
        (2, "aten::mm", "cpu_op", 4.0, 1.0),
    ]
    assert all(isinstance(o, Op) and o._src is cols for o in ops)
    assert type(ops[0]) is type(ops[2]) and type(ops[0]) is not type(ops[1])
    assert all(o.parent is None and o.children is None and o.kernels is None for o in ops)


def test_gpu_events_read_the_columns_and_start_unlinked():
    cols = Columns(ts=array("d", [7.0, 8.0]), dur=array("d", [1.0, 2.0]))
    gs = make_gpu([0, 1], [1, 0], [0, 0], ["memcpy", "gemm_kernel"], ["kernel"], cols)
    assert [(g.uid, g.name, g.cat, g.ts, g.dur, g.launcher) for g in gs] == [
        (0, "gemm_kernel", "kernel", 7.0, 1.0, None),
        (1, "memcpy", "kernel", 8.0, 2.0, None),
    ]
    assert all(isinstance(g, GpuEvent) for g in gs)
    assert make_gpu([], [], [], [], ["kernel"], cols) == []
