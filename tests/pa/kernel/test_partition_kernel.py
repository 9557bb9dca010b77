"""The Triton paged-attention decode kernel on the CPU (TRITON_INTERPRET=1) against the torch reference.

Under the interpreter the MMAs run in fp32 on operands first rounded to the GPU's operand dtype
(the interpreter's bf16 dot is wrong); the loads, addressing, masking, FP8 dequantization,
split-K and reduce paths are the GPU code paths. Compiled-code checks: test_pa_compiled.py.
"""

import os

import pytest
import torch

if torch.cuda.is_available():  # GPU machines run tests/test_pa_gpu.py (compiled kernels) instead
    pytest.skip("CPU interpreter tests; a GPU is present", allow_module_level=True)
os.environ["TRITON_INTERPRET"] = "1"  # before triton is imported anywhere (torch does not import it)

from perfreport.pa.bench.check import check, path_of, poison  # noqa: E402
from perfreport.pa.kernel.cache import build_inputs  # noqa: E402
from perfreport.pa.kernel.host import make_workspace, paged_attention_decode  # noqa: E402
from perfreport.pa.kernel.reference import paged_attention_ref  # noqa: E402
from tests.kit.tensors import assert_close  # noqa: E402

# neither a multiple of 16 or 64: 130 is 3 pages of 64 (split 1 + 2 over 2 partitions), 5 < one page
# (its second partition is empty). The reduce kernel runs one interpreted program per query row
# (sequences x KV heads x group x q_len, ~20 ms each: 128 programs at 16:1, q_len 4, two
# sequences), nearly all of these tests' CPU; the partition kernel's cost barely depends on the
# context. So the wide shapes run one sequence where the reduce is on, and one partition (the
# direct write, no reduce) where what they prove is in the partition kernel; empty partitions
# and the multi-chunk reduce are test_partitions_agree's.
CTX = [130, 5]


def _run(inp, **kw):
    return paged_attention_decode(
        inp.query, inp.key_cache, inp.value_cache, inp.block_tables, inp.context_lens, **inp.kwargs(), **kw
    )


def _ref(inp):
    return paged_attention_ref(
        inp.query,
        inp.key_cache,
        inp.value_cache,
        inp.block_tables,
        inp.context_lens,
        fp8_dtype=inp.fp8_dtype,
        out_dtype=None,
        **inp.kwargs(),
    )


def _check(inp, **kw):
    """bench-pa's check (rel L2 and max error / max|ref| per path) on an output filled with NaN first."""
    ref = _ref(inp)
    if "out" not in kw:
        kw["out"] = torch.empty(ref.shape, dtype=torch.bfloat16)
        poison(kw["out"])
    out = _run(inp, **kw)
    assert out.dtype == torch.bfloat16 and out.shape == ref.shape
    c = check(out, ref, path_of(inp.kv_dtype, kw.get("fp8_mma", "f16")))
    assert c.ok, c.why
    return out, ref


@pytest.mark.parametrize("q_len", [1, 4])
@pytest.mark.parametrize("dv", [128, 192])
def test_bf16_d192(q_len, dv):
    ctx = CTX if q_len == 1 else CTX[:1]  # q_len 4 splits (the reduce): one sequence
    inp = build_inputs(ctx, q_len=q_len, q_heads=16, kv_heads=1, head_dim=192, v_head_dim=dv, page_size=64)
    _check(inp, num_partitions=1 if q_len == 1 else 2)


@pytest.mark.parametrize("dv,layout", [(128, "NHD"), (192, "5D"), (128, "5D")])
def test_fp8_asymmetric_and_symmetric(dv, layout):
    # q_len 2 (32 query rows of the 16:1 group); FP8 at q_len 4, 16:1 is
    # test_partition_kernel_scales.py::test_fp8_mma_error_is_bounded_and_above_the_f16_path
    inp = build_inputs(
        CTX[:1],
        q_len=2,
        q_heads=16,
        kv_heads=1,
        head_dim=192,
        v_head_dim=dv,
        page_size=64,
        kv_dtype="fp8",
        layout=layout,
    )
    assert inp.k_scale is not None and inp.k_scale.numel() == 1
    _check(inp, num_partitions=2)


# page x layout x KV dtype as an orthogonal array (L4): every value of each, and every pair of
# values of any two, split in 3 (the 2 x 2 x 2 product was 8 cases, 7.3 CPU s)
@pytest.mark.parametrize(
    "kv_dtype,layout,page", [("bf16", "NHD", 16), ("bf16", "5D", 64), ("fp8", "NHD", 64), ("fp8", "5D", 16)]
)
def test_pages_and_layouts(page, layout, kv_dtype):
    inp = build_inputs(
        [37, 200],
        q_len=2,
        q_heads=4,
        kv_heads=2,
        head_dim=48,
        v_head_dim=32,
        page_size=page,
        kv_dtype=kv_dtype,
        layout=layout,
        seed=page,
    )
    _check(inp, num_partitions=3)


@pytest.mark.parametrize("q_heads,kv_heads", [(2, 2), (8, 2), (16, 1)])
def test_gqa_ratios(q_heads, kv_heads):
    inp = build_inputs([90, 33], q_len=2, q_heads=q_heads, kv_heads=kv_heads, head_dim=32, v_head_dim=16, page_size=16)
    _check(inp, num_partitions="auto")


@pytest.mark.parametrize("parts", [1, 2, 5, 24])
def test_partitions_agree(parts):
    """Split-K with up to more partitions than pages (19 for the longest sequence) equals one pass."""
    inp = build_inputs([300, 17, 129], q_len=3, q_heads=3, kv_heads=1, head_dim=32, v_head_dim=32, page_size=16, seed=3)
    _check(inp, num_partitions=parts)


@pytest.mark.parametrize("fp8", [torch.float8_e4m3fn, torch.float8_e4m3fnuz])
def test_uint8_storage(fp8):
    inp = build_inputs(
        [80, 20],
        q_len=1,
        q_heads=4,
        kv_heads=1,
        head_dim=32,
        v_head_dim=32,
        page_size=16,
        kv_dtype="fp8",
        fp8_dtype=fp8,
        uint8_storage=True,
    )
    assert inp.key_cache.dtype == torch.uint8
    _check(inp, num_partitions=2, fp8_dtype=fp8)


def test_float_scales_and_large_values():
    inp = build_inputs(
        [64, 40], q_len=2, q_heads=4, kv_heads=1, head_dim=32, v_head_dim=16, page_size=16, kv_dtype="fp8"
    )
    inp.k_scale, inp.v_scale = float(inp.k_scale), float(inp.v_scale)
    _check(inp, num_partitions=2)


def test_context_shorter_than_query_is_refused():
    """ctx includes the q_len new tokens, so ctx < q_len is a caller bug: refused (it silently
    returned zeros for the tokens that saw no key)."""
    inp = build_inputs([2, 40], q_len=4, q_heads=2, kv_heads=1, head_dim=32, v_head_dim=16, page_size=16)
    with pytest.raises(ValueError, match="shorter than q_len 4"):
        _run(inp, num_partitions=2)
    with pytest.raises(ValueError, match="shorter than q_len 4"):  # host bound for device lengths
        _run(
            build_inputs([8, 40], q_len=4, q_heads=2, kv_heads=1, head_dim=32, v_head_dim=16, page_size=16),
            min_context=3,
        )


def test_device_length_rule_is_an_async_assert():
    """Device lengths without min_context: torch._assert_async(min(ctx) >= q_len) is queued (on a
    CPU tensor it fires at once, which is what this checks)."""
    from perfreport.pa.kernel.host import device_length_rule

    device_length_rule(torch.tensor([4, 9], dtype=torch.int32), 4)
    with pytest.raises(RuntimeError):
        device_length_rule(torch.tensor([0, 9], dtype=torch.int32), 1)
    with pytest.raises(RuntimeError):
        device_length_rule(torch.tensor([3, 9], dtype=torch.int32), 4)


def test_stale_nan_slots_do_not_leak():
    """NaN in the unused slots of every last page (and in unused blocks): kernel and reference stay finite."""
    inp = build_inputs([70, 21], q_len=2, q_heads=4, kv_heads=1, head_dim=32, v_head_dim=16, page_size=16)
    ref_clean = _ref(inp)
    k, v = inp.key_cache.clone(), inp.value_cache.clone()
    for s_, ctx in enumerate(inp.context_list):
        last = int(inp.block_tables[s_, (ctx - 1) // 16])
        k[last, ctx % 16 :] = float("nan")
        v[last, ctx % 16 :] = float("nan")
    inp.key_cache, inp.value_cache = k, v
    ref = _ref(inp)
    assert torch.isfinite(ref).all() and torch.equal(ref, ref_clean)
    out, _ = _check(inp, num_partitions=2)
    assert torch.isfinite(out.float()).all()


def test_caller_workspace_and_out_are_reused():
    # one sequence of 2 pages over the workspace's 3 partitions (the last one empty): the split and
    # reduce paths run twice at the fewest interpreted programs (their count, not the context, is
    # the cost: two sequences of 100 and 60 tokens took 1.5 CPU s)
    inp = build_inputs([20], q_len=2, q_heads=4, kv_heads=1, head_dim=32, v_head_dim=16, page_size=16)
    ws = make_workspace(1, 1, 2 * 4, 16, 3, "cpu")
    out = torch.empty(2, 4, 16, dtype=torch.bfloat16)
    r1 = _run(inp, workspace=ws, out=out).clone()
    r2 = _run(inp, workspace=ws, out=out)
    assert r2.data_ptr() == out.data_ptr() and torch.equal(r1, r2)
    assert_close(r1.float(), _ref(inp), atol=3e-2, rtol=1e-2)


def test_cache_over_2_pow_31_elements_uses_64_bit_offsets():
    """Blocks past 2^31 elements (a 4 GiB bf16 K cache, left untouched except the used pages).
    With int32 offsets the interpreter reads wrapped addresses (it crashed when tried)."""
    page, dk, dv = 16, 32, 16
    nb = (2**31) // (page * dk) + 8
    try:
        k = torch.empty(nb, page, 1, dk, dtype=torch.bfloat16)
        v = torch.empty(nb, page, 1, dv, dtype=torch.bfloat16)
    except RuntimeError:
        pytest.skip("cannot reserve 6 GiB of (untouched) address space here")
    used = torch.arange(nb - 6, nb, dtype=torch.int32)
    k[used.long()] = torch.randn(6, page, 1, dk).to(torch.bfloat16)
    v[used.long()] = torch.randn(6, page, 1, dv).to(torch.bfloat16)
    bt = used.reshape(2, 3).contiguous()
    ctx = torch.tensor([40, 33], dtype=torch.int32)
    q = torch.randn(4, 4, dk).to(torch.bfloat16)
    kw = dict(scale=dk**-0.5, q_len=2)
    out = paged_attention_decode(q, k, v, bt, ctx, num_partitions=2, **kw)
    ref = paged_attention_ref(q, k, v, bt, ctx, out_dtype=None, **kw)
    assert_close(out.float(), ref, atol=3e-2, rtol=1e-2)


# ---- validation -----------------------------------------------------------------------------
def _bad(inp, match, **kw):
    with pytest.raises(ValueError, match=match):
        _run(inp, **kw)


def _tiny(**kw):
    base = dict(q_len=1, q_heads=4, kv_heads=2, head_dim=32, v_head_dim=16, page_size=16)
    base.update(kw)
    return build_inputs([20, 30], **base)


def test_validation_errors():
    inp = _tiny()
    _bad(_tiny(q_heads=3, kv_heads=2), "not divisible by KV heads")
    inp2 = _tiny()
    inp2.key_cache = inp2.key_cache.half()
    inp2.value_cache = inp2.value_cache.half()
    _bad(inp2, "unsupported KV cache dtype")
    inp3 = _tiny()
    inp3.value_cache = inp3.value_cache[:-1]
    _bad(inp3, "K and V caches disagree")
    inp4 = _tiny()
    inp4.value_cache = inp4.value_cache.to(torch.float8_e4m3fn)
    _bad(inp4, "different dtypes")
    _bad(_tiny(head_dim=40), "multiples of 16")
    _bad(_tiny(v_head_dim=24), "multiples of 16")
    inp5 = _tiny()
    inp5.block_tables = inp5.block_tables.long()
    _bad(inp5, "int32")
    inp6 = _tiny()
    inp6.block_tables = inp6.block_tables[:, :1]
    _bad(inp6, "too narrow")
    inp7 = _tiny()
    inp7.context_lens = torch.tensor([0, 30], dtype=torch.int32)
    _bad(inp7, ">= 1")
    _bad(inp, "num_partitions must be in", num_partitions=100_000)
    _bad(inp, "fp8_mma", fp8_mma="int8")
    _bad(inp, "partials", partials="fp16")
    _bad(inp, "too narrow", max_context=10_000)
    with pytest.raises(ValueError, match="q_len"):
        paged_attention_decode(
            inp.query, inp.key_cache, inp.value_cache, inp.block_tables, inp.context_lens, scale=0.1, q_len=0
        )
    _bad(inp, "num_partitions", num_partitions=0)
    with pytest.raises(ValueError, match="unknown KV layout"):
        paged_attention_decode(
            inp.query,
            inp.key_cache,
            inp.value_cache,
            inp.block_tables,
            inp.context_lens,
            scale=0.1,
            q_len=1,
            layout="HND",
        )
    inp8 = _tiny()
    inp8.query = inp8.query.float()
    _bad(inp8, "bfloat16")
    inp9 = _tiny()
    inp9.key_cache = inp9.key_cache[:, :, :, :16]
    _bad(inp9, "query head dim")
    inp10 = _tiny()
    inp10.context_lens = inp10.context_lens.long()
    _bad(inp10, "context_lens")
    _bad(inp, "workspace", workspace=make_workspace(2, 2, 3, 16, 2, "cpu"))
    _bad(inp, "out must be", out=torch.empty(2, 4, 32, dtype=torch.bfloat16))
    fp8 = _tiny(kv_dtype="fp8")
    fp8.k_scale = torch.ones(3)
    _bad(fp8, "per tensor")


def test_validation_page_and_5d_width():
    inp = build_inputs([20], q_len=1, q_heads=2, kv_heads=1, head_dim=32, v_head_dim=16, page_size=8)
    _bad(inp, "page size")
    inp = _tiny(layout="5D")
    nb, h, dx, page, x = inp.key_cache.shape
    inp.key_cache = inp.key_cache.reshape(nb, h, dx * 2, page, x // 2)  # x = 4: not 16 bytes
    _bad(inp, "last dim must be 8")


# ---- the issue-13 paths: vectorized 5D V, per-head / per-token scales, FP8 MMAs, bf16 partials --
@pytest.mark.parametrize("kv_dtype,dv", [("bf16", 128), ("bf16", 192), ("fp8", 128)])
def test_vectorized_5d_value_cache(kv_dtype, dv):
    """V as [blocks, H_KV, page/x, Dv, x] (aiter shuffled / FlyDSL pa_decode_tile), seed dims."""
    split = dv == 192  # split (partials, reduce) on one sequence (the reduce: ~20 ms a query row)
    inp = build_inputs(
        [70] if split else [70, 20],
        q_len=4,
        q_heads=16,
        kv_heads=1,
        head_dim=192,
        v_head_dim=dv,
        page_size=64,
        kv_dtype=kv_dtype,
        layout="5D",
        v5=True,
        seed=11,
    )
    x = 8 if kv_dtype == "bf16" else 16
    assert inp.value_cache.shape[1:] == (1, 64 // x, dv, x)
    # the vectorized V loads are the partition kernel's: split (partials, reduce) once, direct
    # otherwise (split 5D-V FP8 is test_fp8_scales_per_head_and_token's)
    _check(inp, num_partitions=2 if split else 1)


@pytest.mark.parametrize("mode", ["head", "token"])
@pytest.mark.parametrize("layout,v5", [("NHD", False), ("5D", True)])
def test_fp8_scales_per_head_and_token(mode, layout, v5):
    inp = build_inputs(
        [45, 100],
        q_len=2,
        q_heads=8,
        kv_heads=2,
        head_dim=32,
        v_head_dim=32,
        page_size=16,
        kv_dtype="fp8",
        layout=layout,
        v5=v5,
        scale_mode=mode,
        seed=5,
    )
    nb = inp.block_tables.max().item() + 1
    assert inp.k_scale.shape == ((2,) if mode == "head" else (nb, 2, 16))
    _check(inp, num_partitions=3)
    _check(inp, num_partitions=1)


# both FP8 paths (f16 dequant, FP8 MMAs) against float64 at [300, 77], 16:1, q_len 4:
# test_partition_kernel_scales.py::test_fp8_mma_error_is_bounded_and_above_the_f16_path


@pytest.mark.parametrize("parts", [7])  # 7 partitions: full ones (the 300-token sequence) and empty ones
def test_bf16_partials(parts):
    inp = build_inputs([300, 17, 129], q_len=3, q_heads=3, kv_heads=1, head_dim=32, v_head_dim=48, page_size=16, seed=4)
    ws = make_workspace(3, 1, 9, 48, parts, "cpu", partials="bf16")
    _check(inp, num_partitions=parts, partials="bf16", workspace=ws)
    _bad(inp, "accumulator", workspace=ws)  # a bf16 workspace with fp32 partials
    # the workspace the call makes itself is bf16 too (the kernels are the same as above, so a
    # small case: 2 sequences of 3 and 2 pages split in 2, 8 query rows)
    small = build_inputs([40, 20], q_len=2, q_heads=2, kv_heads=1, head_dim=32, v_head_dim=48, page_size=16, seed=4)
    _check(small, num_partitions=2, partials="bf16")


def test_the_suites_interpreter_shortcut_changes_no_output():
    """tests/kit/interpreter.py (installed for every test) skips the interpreter's re-patching of
    triton.language at each device-function call and remembers _get_np_dtype's answers: the same
    launches, bit for bit, without it."""
    from tests.kit import interpreter

    inp = build_inputs([70, 21], q_len=2, q_heads=4, kv_heads=2, head_dim=32, v_head_dim=16, page_size=16, seed=8)
    interpreter.install()
    before = interpreter.skipped()
    fast = _run(inp, num_partitions=2)
    assert interpreter.skipped() > before  # the kernels call device functions: skipped there
    interpreter.uninstall()
    try:
        slow = _run(inp, num_partitions=2)
    finally:
        interpreter.install()
    assert torch.equal(fast, slow) and torch.isfinite(fast.float()).all()


def test_tiles_smaller_than_a_page():
    """BF16 tiles are 32 tokens: with page 64 a tile is half a page (block ids shared by two tiles)."""
    inp = build_inputs(
        [64 * 3 + 5, 64], q_len=1, q_heads=4, kv_heads=1, head_dim=32, v_head_dim=32, page_size=64, seed=6
    )
    _check(inp, num_partitions=2)
    inp5 = build_inputs(
        [64 * 3 + 5, 64],
        q_len=1,
        q_heads=4,
        kv_heads=1,
        head_dim=32,
        v_head_dim=32,
        page_size=64,
        layout="5D",
        v5=True,
        seed=6,
    )
    _check(inp5, num_partitions=1)
