"""scripts/capture_inference_fixtures.py (stand-ins registered through scripts/stand_in_library.py)
re-captured into tmp_path: for each of the three KV caches (BF16, float8_e4m3fnuz, FP8 as uint8)
a decode step of 4 and a mixed step of 16 + 3 = 19 tokens run ``vllm::unified_attention_with_output``
around the backend's paged-attention op, with the cache layout its docstring names.

Shapes (module constants): H_Q 8, H_KV 2, D 64, page 16, 40 blocks. ROCm K cache
[blocks, Hkv, D/x, page, x] with x = 16 bytes / element size: 16 / 2 = 8 for BF16 (D/x = 8),
16 / 1 = 16 for FP8 (D/x = 4).
"""

from __future__ import annotations

import pytest

from tests.scripts.kit import annotation_of, cpu_ops, load, scheduled_tokens

BF, FNUZ, U8 = "c10::BFloat16", "c10::Float8_e4m3fnuz", "unsigned char"
DTYPES = [BF, BF, FNUZ, FNUZ, U8, U8]  # decode, mixed for each cache in turn
CASES = {
    "inference_rocm_paged_attention.json.gz": (
        "_rocm_C::paged_attention",
        4,
        5,
        [[40, 2, 8, 16, 8]] * 2 + [[40, 2, 4, 16, 16]] * 4,
    ),
    "inference_aiter_paged_attention_v1.json.gz":  # HND, HND, then NHD for uint8
    ("aiter::paged_attention_v1", 2, 3, [[40, 2, 16, 64]] * 4 + [[40, 16, 2, 64]] * 2),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_each_step_calls_the_backend_op_with_its_cache(name, captured):
    backend, q_arg, k_arg, k_dims = CASES[name]
    ops = cpu_ops(captured / name)
    trace = load(captured / name)
    parents = [e for e in ops if e["name"] == "vllm::unified_attention_with_output"]
    calls = [e for e in ops if e["name"] == backend]
    assert len(parents) == len(calls) == 6
    rows = [e["args"]["Input Dims"][0][0] for e in parents]
    assert rows == [4, 19] * 3
    assert [scheduled_tokens(annotation_of(trace, e)) for e in parents] == rows
    assert [e["args"]["Input Dims"][q_arg] for e in calls] == [[r, 8, 64] for r in rows]
    assert [e["args"]["Input Dims"][k_arg] for e in calls] == k_dims
    assert [e["args"]["Input type"][k_arg] for e in calls] == DTYPES
