"""``assert_close`` for the kernel tests: torch.testing.assert_close's check (same shape and dtype,
``|actual - expected| <= atol + rtol * |expected|`` everywhere, a NaN never close) without its cost:
torch 2.13's first call imports torch.distributed.tensor (~1 CPU s in each test process that
makes one). Tolerances are always given."""

from __future__ import annotations


def assert_close(actual, expected, *, atol: float, rtol: float) -> None:
    assert actual.shape == expected.shape, f"shape {tuple(actual.shape)} != {tuple(expected.shape)}"
    assert actual.dtype == expected.dtype, f"dtype {actual.dtype} != {expected.dtype}"
    a, e = actual.double(), expected.double()
    diff = (a - e).abs()
    bad = ~(diff <= atol + rtol * e.abs())  # a NaN on either side compares False: not close
    n = int(bad.sum())
    if n:
        worst = int(diff.nan_to_num(float("inf")).flatten().argmax())
        raise AssertionError(
            f"{n} of {actual.numel()} elements beyond atol {atol} + rtol {rtol} * |expected|; the worst at "
            f"flat index {worst}: {a.flatten()[worst].item()!r} vs {e.flatten()[worst].item()!r}"
        )
