"""models/moe/vendor.py, on ops built here: vLLM's CUTLASS grouped GEMM worked by hand and the shapes
it refuses (aiter's fmoe / CK stages on the fixture traces: tests/models/moe/test_experts.py)."""

from __future__ import annotations

import pytest

from perfreport.errors import ModelError
from perfreport.models.moe.vendor import CutlassMoeMm
from tests.kit import cpu_op

BF16, FP8, F32, I32 = "c10::BFloat16", "c10::Float8_e4m3fn", "float", "int"


def _cutlass(b_dims=(4, 8, 16), a_dims=(4, 8), out_dims=(4, 16), scales=True):
    dims = [list(out_dims), list(a_dims), list(b_dims)]
    types = [BF16, FP8, FP8]
    if scales:
        # a_scales [1], b_scales [E], expert_offsets [E], problem_sizes [E, 3], 3 x strides [E]
        dims += [[1], [b_dims[0]], [b_dims[0]], [b_dims[0], 3], [b_dims[0]], [b_dims[0]], [b_dims[0]]]
        types += [F32, F32, I32, I32, "long int", "long int", "long int"]
    return cpu_op("_C::cutlass_moe_mm", dims, types)


def test_cutlass_moe_mm_by_hand():
    m = CutlassMoeMm(_cutlass())
    assert (m.M, m.N, m.K, m.E) == (4, 16, 8, 4)
    assert m.flops() == 2 * 4 * 16 * 8 == 1024
    # per expert: b [8, 16] fp8 = 128 B + its b_scale 4 B
    assert m.bytes_per_expert == 132
    # once: a_scales 4 + offsets 4·4 + sizes 4·3·4 + three strides 3·4·8 = 4 + 16 + 48 + 96 = 164
    once = 4 + 16 + 48 + 96
    d = 4 * (1 - (3 / 4) ** 4)  # 4 rows routed uniformly over 4 experts: 2.734375
    assert m.D == pytest.approx(2.734375)
    assert m.bytes() == pytest.approx(32 + 128 + once + d * 132)  # a [4, 8] fp8 32 B, out [4, 16] bf16 128 B
    (a,) = m.assumptions()
    assert (a.bytes_min, a.bytes_max) == (32 + 128 + once + 132, 32 + 128 + once + 4 * 132)
    assert m.params()["distinct_experts"] == 2.73
    assert m.precision() == "fp8"


def test_cutlass_moe_mm_accepts_b_as_e_n_k_and_refuses_other_shapes():
    assert CutlassMoeMm(_cutlass(b_dims=(4, 16, 8))).K == 8
    with pytest.raises(ModelError, match=r"b \[4, 8, 8\] is not \[E, K, N\] for K 8, N 16"):
        CutlassMoeMm(_cutlass(b_dims=(4, 8, 8)))
    with pytest.raises(ModelError, match=r"expects out \[M,N\], a \[M,K\], b \[E,\*,\*\]"):
        CutlassMoeMm(_cutlass(a_dims=(4, 8, 1)))
