"""tests/kit/tensors.assert_close: the bound |actual - expected| <= atol + rtol * |expected| worked by hand."""

import pytest

torch = pytest.importorskip("torch")

from tests.kit.tensors import assert_close  # noqa: E402


def test_within_the_bound_passes_and_beyond_it_names_the_worst():
    e = torch.tensor([1.0, 2.0, -4.0])
    assert_close(e + torch.tensor([0.007, 0.0, 0.0]), e, atol=0.005, rtol=0.0025)  # 0.007 <= 0.005 + 0.0025
    with pytest.raises(AssertionError, match=r"1 of 3 elements .* flat index 2: -4\.0999\d* vs -4\.0"):
        assert_close(e + torch.tensor([0.0, 0.0, -0.1]), e, atol=0.005, rtol=0.0025)  # 0.1 > 0.005 + 0.01


def test_nan_shape_and_dtype_are_never_close():
    e = torch.zeros(2)
    with pytest.raises(AssertionError, match="1 of 2"):
        assert_close(torch.tensor([0.0, float("nan")]), e, atol=1.0, rtol=1.0)
    with pytest.raises(AssertionError, match="shape"):
        assert_close(torch.zeros(3), e, atol=1.0, rtol=1.0)
    with pytest.raises(AssertionError, match="dtype"):
        assert_close(e.to(torch.bfloat16), e, atol=1.0, rtol=1.0)
