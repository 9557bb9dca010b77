"""tables/op_codes.py: argument-set codes gathered from the tree's columns number the ops as
``id(op.args)`` read op by op does, first seen, with and without empty argument sets told apart;
records holding their own values too."""

from __future__ import annotations

from perfreport.events import Op
from perfreport.pipeline import load_tree
from perfreport.tables.op_codes import args_codes
from tests.kit import X, shape_args, write_trace

MM = shape_args([[4, 4], [4, 4]], ["float", "float"])


def _tree(tmp_path):
    ev = [
        X("cpu_op", "aten::mm", 0, 10, **MM),
        X("cpu_op", "aten::mm", 20, 10, **MM),
        X("cpu_op", "aten::add", 40, 10),
        X("user_annotation", "step", 0, 100),
        X("cpu_op", "aten::mm", 60, 10, **shape_args([[2, 2], [2, 2]], ["float", "float"])),
    ]
    return load_tree(write_trace(tmp_path, ev))


def _seen(keys) -> list:
    d: dict = {}
    return [d.setdefault(k, len(d)) for k in keys]


def test_codes_from_the_columns_number_the_ops_own_dicts(tmp_path):
    ops = list(_tree(tmp_path).ops)
    assert ops[0]._src.__class__ is not tuple  # (the column path)
    assert args_codes(ops).tolist() == _seen(id(o.args) for o in ops)
    assert args_codes(ops, empty=True).tolist() == _seen(id(a) if (a := o.args) else 0 for o in ops)
    assert args_codes(ops[:0]).size == 0


def test_records_of_their_own_are_read_one_by_one(tmp_path):
    a = {"Input Dims": [[1]]}
    own = [Op(0, "x", "cpu_op", 1, 1, 0.0, 1.0, args=a), Op(1, "y", "cpu_op", 1, 1, 0.0, 1.0)]
    ops = own + list(_tree(tmp_path).ops) + own
    assert args_codes(ops).tolist() == _seen(id(o.args) for o in ops)
    assert args_codes(ops, empty=True).tolist() == _seen(id(a) if (a := o.args) else 0 for o in ops)
