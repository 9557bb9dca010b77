"""models/args.py: recorded op arguments read explicitly (tensors, Concrete Inputs, broadcasting);
trace strings are never evaluated."""

from __future__ import annotations

import pytest

from perfreport.errors import ModelError
from perfreport.models.args import (
    MAX_DIM,
    Tensor,
    arg_bool,
    arg_bool_list,
    arg_dtype,
    arg_float,
    arg_int,
    arg_int_list,
    broadcast,
    concrete,
    nargs,
    parse_int_list,
    tensor,
    tensor_opt,
)
from tests.kit import fake_op

BF16 = "c10::BFloat16"


def test_tensor_size_and_bytes():
    t = Tensor((4, 8), BF16)
    assert (t.numel, t.nbytes) == (32, 64)
    assert Tensor((), "float").numel == 1 and Tensor((), "float").nbytes == 4


def test_tensor_opt_reads_tensors_only():
    op = fake_op(
        "aten::x",
        [[2, 3], [], [[1], [2]], [4]],
        [BF16, "Scalar", "TensorList", ""],
        strides=[[3, 1], [], [], []],
    )
    assert tensor_opt(op, 0) == Tensor((2, 3), BF16, (3, 1))
    assert [tensor_opt(op, i) for i in (1, 2, 3, 9)] == [None, None, None, None]
    assert nargs(op) == 4
    with pytest.raises(ModelError, match=r"aten::x: argument 1 \(alpha\) is not a tensor"):
        tensor(op, 1, "alpha")
    with pytest.raises(ModelError, match="no Input Dims"):
        tensor(fake_op("aten::y", [], []), 0)
    with pytest.raises(ModelError, match="impossible dimension"):
        tensor_opt(fake_op("aten::z", [[MAX_DIM + 1]], ["float"]), 0)


def test_concrete_scalars():
    op = fake_op(
        "aten::c",
        [[]] * 9,
        ["Scalar"] * 9,
        concrete=["True", "", " 3 ", "1.0000000000000001e-05", "[-1, 2]", "(1,)", "[True, False]", "15", "nope"],
    )
    assert (arg_bool(op, 0), arg_bool(op, 1, default=False)) == (True, False)
    assert (arg_int(op, 2), arg_int(op, 1, default=7)) == (3, 7)
    assert arg_float(op, 3) == pytest.approx(1e-5)
    assert (arg_int_list(op, 4), arg_int_list(op, 5), arg_int_list(op, 1, [0])) == ([-1, 2], [1], [0])
    assert arg_bool_list(op, 6) == [True, False]
    assert arg_dtype(op, 7) == BF16  # ScalarType code 15
    assert concrete(op, 99) == ""
    for read in (arg_bool, arg_int, arg_float, arg_int_list, arg_bool_list):
        with pytest.raises(ModelError, match=r"aten::c: Concrete Inputs\[8\]='nope' is not a"):
            read(op, 8)


def test_parse_int_list():
    assert parse_int_list("[]") == [] and parse_int_list("None") is None and parse_int_list("4") == [4]


def test_broadcast():
    op = fake_op("aten::add", [], [])
    assert broadcast(op, (8, 1, 3), (4, 1), ()) == (8, 4, 3)
    assert broadcast(op) == ()
    with pytest.raises(ModelError, match=r"shapes \(\(2, 3\), \(4, 3\)\) do not broadcast"):
        broadcast(op, (2, 3), (4, 3))
