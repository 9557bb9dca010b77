"""event_fields.py: per-tree record classes (name and columns read from the class) and the fields
that read, and write through to, a record's tuple or its tree's columns."""

from __future__ import annotations

import sys
from array import array

import pytest

from perfreport.event_columns import NONE, SIDE, Columns
from perfreport.events import GpuEvent, Op, column_kind


def _cols():
    return Columns(
        ts=array("d", [1.0, 2.0]),
        dur=array("d", [3.0, 4.0]),
        cs=array("q", [7, NONE]),
        ext=array("q", [NONE, 5]),
        thr=array("i", [0, 0]),
    )


def _op(cols, uid, kind):
    o = object.__new__(kind)
    o.uid = uid
    o.parent = o._ch = o._k = None
    return o


def test_one_class_per_tree_and_category_reads_name_and_columns_from_the_class():
    a, b = _cols(), _cols()
    names = ["aten::mm", "cudaLaunchKernel"]
    codes = array("i", [1, 0])
    k = column_kind(Op, "cpu_op", a, names, codes)
    assert column_kind(Op, "cpu_op", a, names, codes) is k  # cached in the tree's columns
    assert column_kind(Op, "cpu_op", b, names, codes) is not k  # another tree: another class
    assert column_kind(GpuEvent, "kernel", a, names, codes) is not k
    o = _op(a, 1, k)
    assert (o.name, o.cat, o._src is a, o.ts, o.dur) == ("aten::mm", "cpu_op", True, 2.0, 4.0)
    assert sys.getsizeof(o) == 64 and isinstance(o, Op)  # uid, parent, _ch, _k: no name, no _src


def test_a_write_to_a_built_record_goes_to_its_columns():
    c = _cols()
    k = column_kind(Op, "cuda_runtime", c, ["cudaLaunchKernel"], array("i", [0, 0]))
    call = _op(c, 0, k)
    assert (call.correlation, call.seq, call.ext_id) == (7, None, None)
    call.ts, call.dur, call.correlation, call.ext_id = 1.5, 0.5, 9, 1 << 64
    assert (c.ts[0], c.dur[0], c.cs[0], c.ext[0], c.side[("ext", 0)]) == (1.5, 0.5, 9, SIDE, 1 << 64)
    assert (call.end, call.ext_id) == (2.0, 1 << 64)
    call.correlation = None
    assert call.correlation is None and c.cs[0] == NONE
    with pytest.raises(AttributeError):
        call.seq = 3  # a launch call's shared column holds its correlation


def test_a_constructed_record_writes_its_own_tuple():
    o = Op(4, "aten::add", "cpu_op", 1, 2, 0.0, 5.0, seq=3)
    o.dur, o.seq, o.ext_id = 6.0, 8, 11
    assert (o.ts, o.dur, o.end, o.seq, o.ext_id, o.correlation) == (0.0, 6.0, 6.0, 8, 11, None)
    assert sys.getsizeof(o) == 80  # name and _src in its own slots
