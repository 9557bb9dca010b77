"""Compact numbers for people: three significant digits, unit scaled, never longer than MAX_LEN."""

from __future__ import annotations

import pytest

from perfreport.writers import numfmt


@pytest.mark.parametrize(
    "us, text",
    [
        (0.512, "0.512 µs"),
        (5.123, "5.12 µs"),
        (51.23, "51.2 µs"),
        (999.4, "999 µs"),
        (999.6, "1.00 ms"),  # 999.6 µs rounds to 1000 µs: shown in the next unit
        (4055.251, "4.06 ms"),  # 4055.251 µs = 4.055 ms -> 4.06
        (262422.4, "262 ms"),  # 262.4224 ms -> 262
        (1_234_000.0, "1.23 s"),
        (None, ""),
    ],
)
def test_time(us, text):
    assert numfmt.time_us(us) == text


@pytest.mark.parametrize(
    "p, text",
    [
        (45.2, "45%"),
        (8.884, "8.9%"),
        (0.42, "0.4%"),
        (0.01, "<0.1%"),
        (0.0, "0%"),
        (99.96, "100%"),
        (123.4, "123%"),
        (float("nan"), ""),
    ],
)
def test_pct(p, text):
    assert numfmt.pct(p) == text


@pytest.mark.parametrize(
    "v, text",
    [
        (610.666, "611"),
        (90.289, "90.3"),
        (0.313, "0.313"),
        (0.9996, "1.00"),
        (1978.9, "1,979"),
        (262422.4, "262,422"),
        (1.0e8, "1.00e+08"),
        (48, "48"),
        (1_234_567, "1.23M"),
    ],
)
def test_number(v, text):
    assert numfmt.number(v) == text


@pytest.mark.parametrize("v", [0.0004, 0.9996, 999.49, 999.5, 99_999.0, 999_499.0, 5e9, 1e15, -3.3])
def test_never_longer_than_max_len(v):
    for f in (numfmt.time_us, numfmt.pct, numfmt.number, numfmt.count):
        assert len(f(v)) <= numfmt.MAX_LEN, (f.__name__, v, f(v))
