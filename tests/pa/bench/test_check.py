"""bench-pa's correctness check fails a wrong output at the headline magnitudes (CPU only)."""

import pytest
import torch

from perfreport.pa.bench.check import TOLERANCES, check, errors, path_of, poison


def _ref(max_abs: float, seed: int = 0) -> torch.Tensor:
    """A decode output [B*q, H_Q, Dv] whose largest value is ``max_abs``: at 16K context on N(0, 1)
    data max|ref| is about 0.062, at 64K about 0.025 (softmax averages of ~ctx values)."""
    g = torch.Generator().manual_seed(seed)
    r = torch.randn(32 * 4, 16, 128, generator=g, dtype=torch.float64)
    return r * (max_abs / r.abs().max())


def _old_rule_passes(out, ref) -> bool:
    """The rule this check replaced: max |out - ref| <= 0.04 * max(1, max |ref|)."""
    return float((out.double() - ref).abs().max()) <= 0.04 * max(1.0, float(ref.abs().max()))


@pytest.mark.parametrize("max_abs", [0.062, 0.025], ids=["16K-like", "64K-like"])
@pytest.mark.parametrize("path", sorted(TOLERANCES))
def test_zero_and_half_written_outputs_fail(max_abs, path):
    ref = _ref(max_abs)
    zeros = torch.zeros_like(ref, dtype=torch.bfloat16)
    assert _old_rule_passes(zeros, ref) == (max_abs < 0.04)  # the defect: zeros passed at 64K
    assert _old_rule_passes(0.4 * ref, ref)  # and an output 60% too small passed at both
    assert not check(0.4 * ref, ref, path).ok
    c = check(zeros, ref, path)
    assert not c.ok and c.rel_l2 == pytest.approx(1.0) and c.rel_max == pytest.approx(1.0)
    assert "relative L2 error 1 >" in c.why
    half = ref.to(torch.bfloat16)
    half[: half.shape[0] // 2] = 0  # the first half of the query rows never written (zeros)
    c = check(half, ref, path)
    assert not c.ok and 0.6 < c.rel_l2 < 0.8
    poisoned = ref.to(torch.bfloat16)
    poison(poisoned[half.shape[0] // 2 :])  # the second half never written after a NaN fill
    c = check(poisoned, ref, path)
    assert not c.ok and "NaN" in c.why


@pytest.mark.parametrize("max_abs", [0.062, 0.025, 3.0])
def test_bf16_rounded_output_passes_every_path(max_abs):
    ref = _ref(max_abs, seed=1)
    out = ref.to(torch.bfloat16)  # the output's own rounding: rel L2 about 2^-9 / sqrt(3)
    for path in TOLERANCES:
        c = check(out, ref, path)
        assert c.ok, (path, c)
        assert c.rel_l2 < 3e-3 and c.rel_max <= 2**-8


def test_one_wrong_element_fails_on_the_max_error():
    ref = _ref(0.025, seed=2)
    out = ref.clone()
    out[7, 3, 5] += 0.5 * 0.025  # one element off by half the output's range: L2 barely moves
    c = check(out, ref, "bf16")
    assert c.rel_l2 < TOLERANCES["bf16"].rel_l2 and not c.ok and "max error" in c.why


def test_a_launch_that_writes_nothing_fails_after_poison():
    ref = _ref(0.062, seed=3)
    out = ref.to(torch.bfloat16)  # what a previous, correct launch left in the buffer
    assert check(out, ref, "bf16").ok
    poison(out)  # before the next launch; a kernel that then writes nothing leaves NaN
    c = check(out, ref, "bf16")
    assert not c.ok and c.why == "output holds NaN/Inf (unwritten or overflowed)"
    assert torch.isnan(out).all()


def test_errors_by_hand_and_edge_cases():
    ref = torch.tensor([[3.0, 4.0]], dtype=torch.float64)  # ||ref|| = 5, max|ref| = 4
    out = torch.tensor([[3.0, 3.0]])  # diff (0, -1): ||d|| = 1, max|d| = 1
    assert errors(out, ref) == pytest.approx((0.2, 0.25, 1.0, 4.0))
    assert not check(torch.zeros(1, 2), torch.zeros(1, 2, dtype=torch.float64), "bf16").ok  # no scale
    inf = torch.tensor([[3.0, float("inf")]])
    assert not check(inf, ref, "fp8-fp8").ok
    with pytest.raises(ValueError, match="shape"):
        errors(torch.zeros(2, 2), ref)


def test_paths_and_threshold_order():
    assert path_of("bf16") == path_of("bf16", "fp8") == "bf16"
    assert path_of("fp8", "f16") == "fp8-f16" and path_of("fp8", "fp8") == "fp8-fp8"
    for t in TOLERANCES.values():  # every bound stays far below a half-written output's 0.71 / 1.0
        assert t.rel_l2 <= 0.1 and t.rel_max <= 0.2
    assert TOLERANCES["fp8-fp8"].rel_l2 > TOLERANCES["fp8-f16"].rel_l2
