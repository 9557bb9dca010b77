"""FP8 scales on the CPU interpreter: every K kind with every V kind, per-token V scales above 1
on the FP8-MMA path, both paths within their measured bounds (perfreport/pa/bench/check.py)."""

import os

import pytest
import torch

if torch.cuda.is_available():  # GPU machines run tests/pa/kernel/test_pa_gpu.py instead
    pytest.skip("CPU interpreter tests; a GPU is present", allow_module_level=True)
os.environ["TRITON_INTERPRET"] = "1"

from perfreport.pa.bench.check import TOLERANCES, check, errors, path_of, poison  # noqa: E402
from perfreport.pa.kernel.cache import build_inputs, nhd_to_5d  # noqa: E402
from perfreport.pa.kernel.host import paged_attention_decode  # noqa: E402
from perfreport.pa.kernel.reference import paged_attention_ref  # noqa: E402

MODES = ("tensor", "head", "token")


def _inputs(k_mode, v_mode, gain=1.0, **kw):
    args = dict(q_len=2, q_heads=8, kv_heads=2, head_dim=32, v_head_dim=32, page_size=16, kv_dtype="fp8", seed=21)
    args.update(kw)
    return build_inputs([45, 100], scale_mode=k_mode, v_scale_mode=v_mode, v_gain=gain, **args)


def _errors(inp, mma, parts=2):
    a = (inp.query, inp.key_cache, inp.value_cache, inp.block_tables, inp.context_lens)
    ref = paged_attention_ref(*a, fp8_dtype=inp.fp8_dtype, out_dtype=None, compute_dtype=torch.float64, **inp.kwargs())
    out = torch.empty(ref.shape, dtype=torch.bfloat16)
    poison(out)
    paged_attention_decode(*a, num_partitions=parts, fp8_mma=mma, out=out, **inp.kwargs())
    return check(out, ref, path_of("fp8", mma))


@pytest.mark.parametrize("k_mode", MODES)
@pytest.mark.parametrize("v_mode", MODES)
def test_every_k_and_v_scale_kind_is_accepted_and_correct(k_mode, v_mode):
    """A per-head K scale with a per-tensor V scale was refused ('same layout'); any pair is valid."""
    inp = _inputs(k_mode, v_mode)
    assert inp.k_scale.dim() == {"tensor": 1, "head": 1, "token": 3}[k_mode]
    assert inp.v_scale.dim() == {"tensor": 1, "head": 1, "token": 3}[v_mode]
    # the scales are applied in the partition kernel: one partition (the direct write) here; the
    # split with per-head and per-token scales (partials, reduce) is test_partition_kernel.py's
    # test_fp8_scales_per_head_and_token and the test below (the reduce: ~20 ms a query row)
    for mma in ("f16", "fp8"):
        c = _errors(inp, mma, parts=1)
        assert c.ok, (mma, c.why)


@pytest.mark.parametrize("layout,v5", [("NHD", False), ("5D", True), ("5D", False)])
def test_fp8_mma_with_per_token_v_scales_above_one(layout, v5):
    """V values N(0, 1000^2): per-token V scales of about 7. P scaled by them and by FP8_MAX used
    to saturate at 448 (47-78% error); normalized by the tile's largest scale it stays in range."""
    inp = _inputs("head", "token", gain=1000.0, layout=layout, v5=v5)
    assert float(inp.v_scale.max()) > 1.0
    parts = 2 if layout == "NHD" else 1  # the saturation was in the partition kernel: split once
    f16, fp8 = _errors(inp, "f16", parts), _errors(inp, "fp8", parts)
    assert f16.ok and f16.rel_l2 < 0.01, f16.why
    assert fp8.ok and fp8.rel_l2 < TOLERANCES["fp8-fp8"].rel_l2, fp8.why


def test_fp8_mma_error_is_bounded_and_above_the_f16_path():
    """Both FP8 paths (f16 dequant, FP8 MMAs; split in 2, 16:1, q_len 4) against float64 at the
    headline head dims (measured distributions: docs): the f16 path's error is the bf16 output
    rounding; the FP8-MMA path adds Q and P quantized to e4m3 (3 mantissa bits). One sequence:
    the reduce costs ~20 ms per query row under the interpreter (64 rows here)."""
    inp = build_inputs(
        [300], q_len=4, q_heads=16, kv_heads=1, head_dim=64, v_head_dim=32, page_size=16, kv_dtype="fp8", seed=9
    )
    f16, fp8 = _errors(inp, "f16"), _errors(inp, "fp8")
    assert f16.rel_l2 < 0.005 and f16.ok  # ~ the bf16 output rounding
    assert f16.rel_l2 < fp8.rel_l2 < TOLERANCES["fp8-fp8"].rel_l2  # e4m3 Q and P: 3 mantissa bits
    assert f16.max_err < 2**-7 * f16.ref_max  # ~ one bf16 ulp of the output
    assert f16.max_err <= fp8.max_err < 0.05 * fp8.ref_max  # coarser (measured 3.7%), bounded


def test_vectorized_v_needs_its_dv_stride_equal_to_x():
    """The kernel takes the vectorized V's Dv stride as the constexpr x (16-byte copies): a V view
    with another Dv stride is refused instead of read wrong."""
    inp = build_inputs([40], q_len=1, q_heads=2, kv_heads=1, head_dim=32, v_head_dim=32, page_size=16, seed=3)
    k5, v5 = nhd_to_5d(inp.key_cache, inp.value_cache, v5=True)  # v5 [nb, 1, 2, 32, 8]
    wide = torch.zeros(*v5.shape[:3], 64, 8, dtype=v5.dtype)[:, :, :, ::2]  # Dv stride 16, not 8
    wide.copy_(v5)
    assert wide.stride(3) == 16 and torch.equal(wide, v5)
    a = (inp.query, k5, wide, inp.block_tables, inp.context_lens)
    with pytest.raises(ValueError, match="Dv dimension's stride must be 8"):
        paged_attention_decode(*a, scale=inp.scale, q_len=1, layout="5D")
    out = paged_attention_decode(
        inp.query, k5, v5, inp.block_tables, inp.context_lens, scale=inp.scale, q_len=1, layout="5D"
    )
    ref = paged_attention_ref(*a[:2], v5, *a[3:], scale=inp.scale, q_len=1, layout="5D", out_dtype=None)
    assert errors(out, ref)[0] < TOLERANCES["bf16"].rel_l2
