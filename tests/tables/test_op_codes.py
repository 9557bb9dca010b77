"""tables/op_codes.py: argument-set ids gathered from the tree's columns equal ``id(op.args)`` read op
by op, with and without empty argument sets told apart; records holding their own values too."""

from __future__ import annotations

import numpy as np

from perfreport.events import Op
from perfreport.pipeline import load_tree
from perfreport.tables.op_codes import args_ids
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


def test_ids_from_the_columns_are_the_ops_own(tmp_path):
    ops = list(_tree(tmp_path).ops)
    assert ops[0]._src.__class__ is not tuple  # (the column path)
    assert args_ids(ops).tolist() == [id(o.args) for o in ops]
    assert args_ids(ops, empty=0).tolist() == [id(a) if (a := o.args) else 0 for o in ops]
    assert args_ids(ops[:0]).size == 0


def test_records_of_their_own_are_read_one_by_one(tmp_path):
    a = {"Input Dims": [[1]]}
    ops = [Op(0, "x", "cpu_op", 1, 1, 0.0, 1.0, args=a), Op(1, "y", "cpu_op", 1, 1, 0.0, 1.0), *_tree(tmp_path).ops]
    got = args_ids(ops, empty=-1)
    assert got.dtype == np.int64 and got.tolist() == [id(a), -1] + [id(o.args) if o.args else -1 for o in ops[2:]]
