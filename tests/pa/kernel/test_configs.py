"""pa/kernel/configs.py: (block_n, num_stages) per target family, KV dtype and MMA path."""

from __future__ import annotations

import pytest

from perfreport.pa.kernel.configs import DEFAULTS, FALLBACK, default_config, family


@pytest.mark.parametrize(
    ("target", "want"),
    [
        ("sm_90a", "sm_90"),
        ("sm_90", "sm_90"),
        ("sm_100a", "sm_10"),
        ("gfx942", "gfx9"),
        ("gfx950", "gfx9"),
        ("gfx1100", "gfx1100"),
    ],
)
def test_family(target, want):
    assert family(target) == want


def test_searched_targets_take_the_table():
    assert default_config("sm_90a", "bf16", "bf16") == (32, 4)
    assert default_config("sm_90", "fp8", "f16") == (64, 4)
    assert default_config("gfx942", "fp8", "fp8") == (32, 3)


def test_unsearched_targets_fall_back_by_mma_path():
    assert default_config("sm_80", "bf16", "bf16") == FALLBACK["bf16"] == (32, 3)
    assert default_config("gfx1100", "fp8", "f16") == FALLBACK["f16"] == (64, 3)


def test_every_entry_is_a_power_of_two_tile_and_a_small_stage_count():
    for (fam, kv, mma), (bn, st) in DEFAULTS.items():
        assert fam in ("sm_90", "gfx9") and kv in ("bf16", "fp8") and mma in FALLBACK
        assert bn & (bn - 1) == 0 and 16 <= bn <= 128 and 2 <= st <= 5
