"""scripts/stand_in_library.py: the one helper every capture script registers its stand-in ops
with. Registering the same kernel again is a no-op (a script's register_ops may run twice in a
process); another kernel under a name already registered is refused."""

from __future__ import annotations

import sys

import pytest

from tests.scripts.kit import ROOT

torch = pytest.importorskip("torch")
sys.path.insert(0, str(ROOT / "scripts"))
import stand_in_library  # noqa: E402

NS = "perfreport_stand_in_test"


def _twice(x):
    return x * 2


def _thrice(x):
    return x * 3


def test_a_defined_op_runs_its_kernel_and_defining_it_again_is_a_no_op():
    stand_in_library.define(NS, "twice(Tensor x) -> Tensor", _twice)
    stand_in_library.define(NS, "twice(Tensor x) -> Tensor", _twice)
    assert torch.ops.perfreport_stand_in_test.twice(torch.tensor([1.5])).tolist() == [3.0]


def test_another_kernel_under_a_registered_name_is_refused():
    stand_in_library.define(NS, "once(Tensor x) -> Tensor", _twice)
    with pytest.raises(RuntimeError, match=f"{NS}::once is already registered"):
        stand_in_library.define(NS, "once(Tensor x) -> Tensor", _thrice)
    assert torch.ops.perfreport_stand_in_test.once(torch.tensor([2.0])).tolist() == [4.0]
