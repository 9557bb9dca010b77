"""models/reduce.py: reductions, scans and softmax; FLOPs, output sizes and dtypes worked by hand."""

from __future__ import annotations

import pytest

from perfreport.errors import ModelError
from perfreport.models.reduce import Reduce, Scan, Softmax
from tests.kit import fake_op

BF16 = "c10::BFloat16"


def test_mean_over_the_last_dim():
    m = Reduce(
        fake_op("aten::mean", [[8, 16], [], [], []], [BF16, "ScalarList", "Scalar", ""], ["", "[-1]", "False", ""])
    )
    assert (m.reduced, m.out_shape, m.out_dtype) == ((1,), (8,), BF16)
    assert m.flops() == 128 + 8  # one add per input, one divide per output
    assert m.bytes() == 128 * 2 + 8 * 2


def test_sum_of_ints_promotes_to_int64_and_every_dim_when_none_given():
    m = Reduce(fake_op("aten::sum", [[4, 5]], ["int"]))
    assert (m.out_shape, m.out_dtype) == ((), "long int")
    assert m.bytes() == 20 * 4 + 1 * 8


def test_max_dim_writes_indices_and_argmax_only_indices():
    m = Reduce(fake_op("aten::max", [[4, 6], [], []], ["float", "Scalar", "Scalar"], ["", "1", "False"]))
    assert m.out_shape == (4,) and m.index_out
    assert m.bytes() == 24 * 4 + 4 * 4 + 4 * 8
    a = Reduce(fake_op("aten::argmax", [[4, 6], [], []], ["float", "Scalar", "Scalar"], ["", "0", "False"]))
    assert (a.out_shape, a.out_dtype) == ((6,), "long int")
    assert a.bytes() == 24 * 4 + 6 * 8


def test_max_of_two_tensors_is_elementwise():
    m = Reduce(fake_op("aten::max", [[4, 1], [1, 6]], ["float", "float"]))
    assert m.out_shape == (4, 6)
    assert m.flops() == 24 and m.bytes() == 4 * 4 + 6 * 4 + 24 * 4


def test_var_and_logsumexp_ops_per_element():
    v = Reduce(fake_op("aten::var", [[10, 3], [], []], ["float", "ScalarList", "Scalar"], ["", "[0]", "True"]))
    assert v.flops() == 3 * 30 + 1 * 3
    lse = Reduce(fake_op("aten::logsumexp", [[10, 3], []], ["float", "ScalarList"], ["", "[1]"]))
    assert lse.flops() == 4 * 30


def test_scan_and_softmax():
    s = Scan(fake_op("aten::cumsum", [[5, 7], [], []], ["bool", "Scalar", ""], ["", "1", ""]))
    assert (s.out_shape, s.out_dtype, s.flops()) == ((5, 7), "long int", 35)
    sm = Softmax(fake_op("aten::_softmax", [[2, 8], [], []], [BF16, "Scalar", "Scalar"], ["", "-1", "True"]))
    assert (sm.out_dtype, sm.flops()) == ("float", 5 * 16)
    assert sm.bytes() == 16 * 2 + 16 * 4  # half_to_float: fp32 output


def test_unknown_reduction_is_refused():
    with pytest.raises(ModelError, match="not a known reduction"):
        Reduce(fake_op("aten::median", [[4]], ["float"]))
