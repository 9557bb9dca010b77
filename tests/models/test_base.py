"""models/base.py: the PerfModel contract, bounds over independent assumptions, the arg helpers."""

from __future__ import annotations

import pytest

from perfreport.errors import ModelError
from perfreport.models.base import Assumption, PerfModel, bounds, concrete_input, input_dims, input_type
from tests.kit import fake_op


class Two(PerfModel):
    kind = "matrix"

    def __init__(self, op, assumptions=()):
        super().__init__(op)
        self._a = list(assumptions)

    def precision(self):
        return "bf16"

    def assumptions(self):
        return self._a


def test_the_base_class_demands_the_four_methods():
    m = PerfModel(fake_op("x", [], []))
    for f in (m.params, m.flops, m.bytes, m.precision):
        with pytest.raises(NotImplementedError):
            f()
    assert (m.category, m.kind, m.needs, m.assumptions()) == ("other", "vector", (), [])
    assert Two(fake_op("x", [], [])).compute_spec() == "matrix_bf16"


def test_no_assumption_collapses_to_the_point():
    assert bounds(Two(fake_op("x", [], [])), 100.0, 50.0) == (100.0, 100.0, 50.0, 50.0)


def test_bounds_add_each_assumptions_delta():
    # point: 100 FLOPs, 50 bytes. A: bytes 40..90 (FLOPs fixed); B: bytes 45..55 reversed, FLOPs 80..130
    a = Assumption("experts", 40.0, 90.0)
    b = Assumption("window", 55.0, 45.0, 130.0, 80.0)
    # bytes: 50 + (40-50) + (45-50) = 35 .. 50 + (90-50) + (55-50) = 95; FLOPs 80 .. 130
    assert bounds(Two(fake_op("x", [], []), [a, b]), 100.0, 50.0) == (80.0, 130.0, 35.0, 95.0)


def test_bounds_never_go_below_zero():
    a = Assumption("huge", -10.0, 5.0, -20.0, 10.0)
    assert bounds(Two(fake_op("x", [], []), [a]), 5.0, 5.0) == (0.0, 10.0, 0.0, 5.0)


def test_arg_helpers():
    op = fake_op("aten::mm", [[2, 3], "x"], ["float", "float"], concrete=["", "7"])
    assert input_dims(op, 0) == [2, 3]
    assert (input_type(op, 1), concrete_input(op, 1), concrete_input(op, 5)) == ("float", "7", "")
    with pytest.raises(ModelError, match=r"aten::mm: no Input Dims\[2\]"):
        input_dims(op, 2)
    with pytest.raises(ModelError, match=r"Input Dims\[1\] is not a tensor shape"):
        input_dims(op, 1)
    with pytest.raises(ModelError, match=r"no Input type\[4\]"):
        input_type(op, 4)
