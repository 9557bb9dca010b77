"""pa/kernel/launch.py: the kernels' constexprs from a case (head dims split into powers of two,
the query-row tile, layouts, scales, MMA path) and which stride arguments the AOT compile may
declare divisible by 16. The launches themselves: tests/pa/kernel/test_partition_kernel.py."""

from __future__ import annotations

import os

import pytest
import torch

if not torch.cuda.is_available():
    os.environ["TRITON_INTERPRET"] = "1"  # before the kernels are defined (see test_partition_kernel.py)

from perfreport.pa.kernel.configs import FALLBACK  # noqa: E402
from perfreport.pa.kernel.launch import _divisible, default_warps, make_cfg, split_dim  # noqa: E402


@pytest.mark.parametrize(
    ("d", "parts"), [(128, (128, 0)), (192, (128, 64)), (160, (128, 32)), (200, (128, 128)), (1, (1, 0))]
)
def test_split_dim(d, parts):
    assert split_dim(d) == parts


def _cfg(**kw):
    base = dict(q_len=4, group=8, dk=192, dv=128, page=64, k_5d=False, v_layout=0, x=8, kv="bf16", k_scale=0, v_scale=0,
                mma="bf16", direct=False, part_bf16=False, fp8_max=448.0, dot_f32=False)  # fmt: skip
    return make_cfg(**{**base, **kw})


def test_make_cfg_for_an_nhd_bf16_case():
    c = _cfg()
    assert (c["Q_LEN"], c["GROUP"], c["BLOCK_M"]) == (4, 8, 32)  # 32 query rows per KV head
    assert (c["DK"], c["DKA"], c["DKB"], c["DV"], c["DVA"], c["DVB"]) == (192, 128, 64, 128, 128, 0)
    assert (c["X"], c["K_5D"], c["V_LAYOUT"], c["VX"], c["MMA"]) == (1, False, 0, 1, 0)
    assert c["BLOCK_N"] == FALLBACK["bf16"][0]
    assert _cfg(q_len=1, group=2)["BLOCK_M"] == 16  # never below 16 rows
    assert _cfg(q_len=3, group=7)["BLOCK_M"] == 32  # 21 rows -> the next power of two


def test_make_cfg_for_5d_fp8_with_token_scales():
    c = _cfg(k_5d=True, v_layout=2, x=16, kv="fp8", k_scale=3, v_scale=2, mma="fp8", block_n=64)
    assert (c["X"], c["VX"], c["K_SCALE"], c["V_SCALE"], c["MMA"], c["BLOCK_N"], c["FP8_MAX"]) == (
        16,
        16,
        3,
        2,
        2,
        64,
        448.0,
    )


def test_divisible_strides():
    assert _divisible("stride_ksb", 3, 0, False, False) and not _divisible("stride_ksb", 2, 0, False, False)
    assert _divisible("stride_vsh", 0, 3, False, False) and not _divisible("stride_vsh", 0, 1, False, False)
    assert _divisible("stride_vd", 0, 0, True, True) and not _divisible("stride_vd", 0, 0, True, False)
    assert _divisible("stride_qs", 0, 0, False, False)
    assert default_warps(64, hip=False) == default_warps(64, hip=True) == 4
