"""cli/numbers.py: numeric options finite and in range (issue 22)."""

from __future__ import annotations

import math

import pytest

from perfreport.cli.numbers import check_analyze_numbers, number, percent
from perfreport.errors import BadInput


@pytest.mark.parametrize("v", [math.nan, math.inf, -math.inf, -1, 100.5, 101])
def test_percent_refuses_what_disarms_a_gate(v):
    with pytest.raises(BadInput, match=r"^--min-coverage: must be a finite number in \[0, 100\]"):
        percent("--min-coverage", v)


@pytest.mark.parametrize("v", [0, 0.0, 37.5, 100])
def test_percent_accepts_the_range(v):
    assert percent("--min-coverage", v) == v


def test_none_passes_and_ints_stay_whole():
    assert number("--top", None, 0) is None
    with pytest.raises(BadInput, match="whole number in \\[1, 4096\\], not 0"):
        check_analyze_numbers(short_kernel_us=10.0, top=None, min_coverage=None, jobs=0)
    with pytest.raises(BadInput, match="--short-kernel-us: must be a finite number >= 0 µs, not nan"):
        check_analyze_numbers(short_kernel_us=math.nan, top=None, min_coverage=None, jobs=None)
