"""The Triton paged-attention decode kernel on the CPU (TRITON_INTERPRET=1) against the torch reference.

Under the interpreter the MMAs run in fp32 (the interpreter's bf16 dot is wrong); the loads,
addressing, masking, FP8 dequantization, split-K and reduce paths are the GPU code paths.
The AOT tests compile the same kernels for sm_90a and gfx942 with the installed triton.
"""
import os

import pytest
import torch

if torch.cuda.is_available():  # GPU machines run tests/test_pa_gpu.py (compiled kernels) instead
    pytest.skip("CPU interpreter tests; a GPU is present", allow_module_level=True)
os.environ["TRITON_INTERPRET"] = "1"  # before triton is imported anywhere (torch does not import it)

from perfreport.kernels.paged_attention_host import (make_workspace,  # noqa: E402
                                                      paged_attention_decode)
from perfreport.kernels.paged_attention_ref import paged_attention_ref  # noqa: E402
from perfreport.kernels.paged_cache import build_inputs  # noqa: E402

CTX = [70, 130, 5]  # none a multiple of 16 or 64; 5 < one page


def _run(inp, **kw):
    return paged_attention_decode(inp.query, inp.key_cache, inp.value_cache, inp.block_tables,
                                  inp.context_lens, **inp.kwargs(), **kw)


def _ref(inp):
    return paged_attention_ref(inp.query, inp.key_cache, inp.value_cache, inp.block_tables,
                               inp.context_lens, fp8_dtype=inp.fp8_dtype, out_dtype=None,
                               **inp.kwargs())


def _check(inp, **kw):
    out = _run(inp, **kw)
    ref = _ref(inp)
    assert out.dtype == torch.bfloat16 and out.shape == ref.shape
    err = (out.float() - ref).abs().max().item()
    assert err < 3e-2 * max(1.0, ref.abs().max().item()), err
    return out, ref


@pytest.mark.parametrize("q_len", [1, 4])
@pytest.mark.parametrize("dv", [128, 192])
def test_bf16_d192(q_len, dv):
    inp = build_inputs(CTX, q_len=q_len, q_heads=16, kv_heads=1, head_dim=192, v_head_dim=dv,
                       page_size=64)
    _check(inp, num_partitions=1 if q_len == 1 else 2)


@pytest.mark.parametrize("dv,layout", [(128, "NHD"), (192, "5D"), (128, "5D")])
def test_fp8_asymmetric_and_symmetric(dv, layout):
    inp = build_inputs(CTX, q_len=4, q_heads=16, kv_heads=1, head_dim=192, v_head_dim=dv,
                       page_size=64, kv_dtype="fp8", layout=layout)
    assert inp.k_scale is not None and inp.k_scale.numel() == 1
    _check(inp, num_partitions=2)


@pytest.mark.parametrize("page", [16, 64])
@pytest.mark.parametrize("layout", ["NHD", "5D"])
@pytest.mark.parametrize("kv_dtype", ["bf16", "fp8"])
def test_pages_and_layouts(page, layout, kv_dtype):
    inp = build_inputs([37, 200], q_len=2, q_heads=4, kv_heads=2, head_dim=48, v_head_dim=32,
                       page_size=page, kv_dtype=kv_dtype, layout=layout, seed=page)
    _check(inp, num_partitions=3)


@pytest.mark.parametrize("q_heads,kv_heads", [(2, 2), (8, 2), (16, 1)])
def test_gqa_ratios(q_heads, kv_heads):
    inp = build_inputs([90, 33], q_len=2, q_heads=q_heads, kv_heads=kv_heads, head_dim=32,
                       v_head_dim=16, page_size=16)
    _check(inp, num_partitions="auto")


@pytest.mark.parametrize("parts", [1, 2, 5, 24])
def test_partitions_agree(parts):
    """Split-K with up to more partitions than pages (19 for the longest sequence) equals one pass."""
    inp = build_inputs([300, 17, 129], q_len=3, q_heads=3, kv_heads=1, head_dim=32, v_head_dim=32,
                       page_size=16, seed=3)
    _check(inp, num_partitions=parts)


@pytest.mark.parametrize("fp8", [torch.float8_e4m3fn, torch.float8_e4m3fnuz])
def test_uint8_storage(fp8):
    inp = build_inputs([80, 20], q_len=1, q_heads=4, kv_heads=1, head_dim=32, v_head_dim=32,
                       page_size=16, kv_dtype="fp8", fp8_dtype=fp8, uint8_storage=True)
    assert inp.key_cache.dtype == torch.uint8
    _check(inp, num_partitions=2, fp8_dtype=fp8)


def test_float_scales_and_large_values():
    inp = build_inputs([64, 40], q_len=2, q_heads=4, kv_heads=1, head_dim=32, v_head_dim=16,
                       page_size=16, kv_dtype="fp8")
    inp.k_scale, inp.v_scale = float(inp.k_scale), float(inp.v_scale)
    _check(inp, num_partitions=2)


def test_context_shorter_than_query_gives_zeros():
    inp = build_inputs([2, 40], q_len=4, q_heads=2, kv_heads=1, head_dim=32, v_head_dim=16, page_size=16)
    out, ref = _check(inp, num_partitions=2)
    assert out[:2].abs().max().item() == 0.0  # tokens 0 and 1 of sequence 0 see no key
    assert out[2:4].abs().max().item() > 0


def test_caller_workspace_and_out_are_reused():
    inp = build_inputs([100, 60], q_len=2, q_heads=4, kv_heads=1, head_dim=32, v_head_dim=16, page_size=16)
    ws = make_workspace(2, 1, 2 * 4, 16, 3, "cpu")
    out = torch.empty(4, 4, 16, dtype=torch.bfloat16)
    r1 = _run(inp, workspace=ws, out=out).clone()
    r2 = _run(inp, workspace=ws, out=out)
    assert r2.data_ptr() == out.data_ptr() and torch.equal(r1, r2)
    torch.testing.assert_close(r1.float(), _ref(inp), atol=3e-2, rtol=1e-2)


def test_cache_over_2_pow_31_elements_uses_64_bit_offsets():
    """Blocks past 2^31 elements (a 4 GiB bf16 K cache, left untouched except the used pages).
    With int32 offsets the interpreter reads wrapped addresses (it crashed when tried)."""
    page, dk, dv = 16, 32, 16
    nb = (2 ** 31) // (page * dk) + 8
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
    kw = dict(scale=dk ** -0.5, q_len=2)
    out = paged_attention_decode(q, k, v, bt, ctx, num_partitions=2, **kw)
    ref = paged_attention_ref(q, k, v, bt, ctx, out_dtype=None, **kw)
    torch.testing.assert_close(out.float(), ref, atol=3e-2, rtol=1e-2)


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
    _bad(inp, "too narrow", max_context=10_000)
    with pytest.raises(ValueError, match="q_len"):
        paged_attention_decode(inp.query, inp.key_cache, inp.value_cache, inp.block_tables,
                               inp.context_lens, scale=0.1, q_len=0)
    _bad(inp, "num_partitions", num_partitions=0)
    with pytest.raises(ValueError, match="unknown KV layout"):
        paged_attention_decode(inp.query, inp.key_cache, inp.value_cache, inp.block_tables,
                               inp.context_lens, scale=0.1, q_len=1, layout="HND")
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
    fp8.k_scale = torch.ones(2)
    _bad(fp8, "one element")


def test_validation_page_and_5d_width():
    inp = build_inputs([20], q_len=1, q_heads=2, kv_heads=1, head_dim=32, v_head_dim=16, page_size=8)
    _bad(inp, "page size")
    inp = _tiny(layout="5D")
    nb, h, dx, page, x = inp.key_cache.shape
    inp.key_cache = inp.key_cache.reshape(nb, h, dx * 2, page, x // 2)  # x = 4: not 16 bytes
    _bad(inp, "last dim must be 8")


# ---- ahead-of-time compiles for real targets (triton's own ptxas / AMD backend) -------------
# Run in a subprocess: this module runs triton in interpreter mode, which cannot compile.
_AOT = r"""
import json, re, sys
import triton.backends as tb
from perfreport.kernels.paged_attention_host import aot_compile
res = {}
if "nvidia" in tb.backends:
    ptx = aot_compile("sm_90a", kv="bf16", dk=192, dv=128, q_len=4, group=16, page=64).asm["ptx"]
    res["sm_90a"] = dict(wgmma="wgmma" in ptx, cp_async="cp.async" in ptx)
if "amd" in tb.backends:
    asm = aot_compile("gfx942", kv="fp8_fnuz", dk=192, dv=192, q_len=4, group=16, page=64,
                      layout="5D").asm["amdgcn"]
    spills = [int(x) for x in re.findall(r"\.vgpr_spill_count:\s*(\d+)", asm)]
    res["gfx942"] = dict(mfma="mfma" in asm, spills=max(spills or [0]))
print(json.dumps(res))
"""


def test_aot_compile_sm90_and_gfx942():
    import json
    import subprocess
    import sys
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    env.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
    env["PYTHONPATH"] = os.pathsep.join([os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                         env.get("PYTHONPATH", "")])
    r = subprocess.run([sys.executable, "-c", _AOT], capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    res = json.loads(r.stdout.strip().splitlines()[-1])
    if not res:
        pytest.skip("triton has neither the NVIDIA nor the AMD backend")
    if "sm_90a" in res:  # Hopper: wgmma MMAs and 16-byte cp.async loads at the seed shape
        assert res["sm_90a"] == dict(wgmma=True, cp_async=True)
    if "gfx942" in res:  # MI300: MFMA, no VGPR spills with 4 waves
        assert res["gfx942"] == dict(mfma=True, spills=0)
