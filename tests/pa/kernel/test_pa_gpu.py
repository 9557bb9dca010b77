"""The Triton kernel on a real GPU at the seed's shapes (skipped without a CUDA/HIP GPU).

Seed: batch 32, query length 4, 16 query heads per KV head, Q/K head dim 192, V 128 and 192,
page 64, contexts 16K and 64K, BF16 and FP8 KV, NHD and 5D layouts.
"""

import os

import pytest

torch = pytest.importorskip("torch")

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA or HIP GPU")]


@pytest.fixture(autouse=True)
def _compiled_triton():
    if os.environ.get("TRITON_INTERPRET") == "1":
        pytest.skip("TRITON_INTERPRET=1 in this process: run `pytest -m gpu tests/test_pa_gpu.py` alone")


# bench-pa's check (perfreport/pa/bench/check.py): rel L2 and max error / max|ref| per kernel path,
# the output filled with NaN before the launch so a kernel that writes nothing fails


def _inputs(ctx, dv, kv, layout="NHD", batch=32, q_len=4, **kw):
    from perfreport.pa.kernel.cache import build_inputs

    return build_inputs(
        [ctx] * batch,
        q_len=q_len,
        q_heads=16,
        kv_heads=1,
        head_dim=192,
        v_head_dim=dv,
        page_size=64,
        kv_dtype=kv,
        layout=layout,
        device="cuda",
        seed=1,
        **kw,
    )


def _check(inp, **kw):
    from perfreport.pa.bench.check import check, path_of, poison
    from perfreport.pa.kernel.cache import cache_geometry
    from perfreport.pa.kernel.host import paged_attention_decode
    from perfreport.pa.kernel.reference import paged_attention_ref

    rows, hq, _ = inp.query.shape
    dv = cache_geometry(inp.key_cache, inp.value_cache, inp.layout)[4]
    out = torch.empty(rows, hq, dv, dtype=torch.bfloat16, device="cuda")
    poison(out)  # a kernel that writes nothing (or part) fails
    out = paged_attention_decode(
        inp.query,
        inp.key_cache,
        inp.value_cache,
        inp.block_tables,
        inp.context_lens,
        max_context=inp.max_context,
        min_context=min(inp.context_list),
        fp8_dtype=inp.fp8_dtype,
        out=out,
        **inp.kwargs(),
        **kw,
    )
    ref = paged_attention_ref(
        inp.query,
        inp.key_cache,
        inp.value_cache,
        inp.block_tables,
        inp.context_lens,
        fp8_dtype=inp.fp8_dtype,
        out_dtype=None,
        **inp.kwargs(),
    )
    c = check(out, ref, path_of(inp.kv_dtype, kw.get("fp8_mma", "f16")))
    assert c.ok, c.why
    return out


@pytest.mark.parametrize("ctx", [16384, 65536])
@pytest.mark.parametrize("dv", [128, 192])
@pytest.mark.parametrize("kv", ["bf16", "fp8"])
def test_seed_shapes_nhd(ctx, dv, kv):
    _check(_inputs(ctx, dv, kv))


@pytest.mark.parametrize("dv,kv", [(128, "bf16"), (192, "bf16"), (128, "fp8"), (192, "fp8")])
def test_seed_shapes_5d(dv, kv):
    _check(_inputs(16384, dv, kv, layout="5D"))


@pytest.mark.parametrize("parts", [1, 3, 64])
def test_partitions_and_ragged_contexts(parts):
    from perfreport.pa.kernel.cache import build_inputs

    inp = build_inputs(
        [5, 63, 64, 65, 1000, 4099],
        q_len=4,
        q_heads=16,
        kv_heads=1,
        head_dim=192,
        v_head_dim=128,
        page_size=16,
        kv_dtype="fp8",
        device="cuda",
        seed=2,
    )
    _check(inp, num_partitions=parts)


@pytest.mark.parametrize("q_len,hq,hkv", [(1, 8, 8), (4, 16, 4), (2, 32, 2)])
def test_gqa_and_query_lengths(q_len, hq, hkv):
    from perfreport.pa.kernel.cache import build_inputs

    inp = build_inputs(
        [777, 2048, 4],
        q_len=q_len,
        q_heads=hq,
        kv_heads=hkv,
        head_dim=192,
        v_head_dim=192,
        page_size=64,
        device="cuda",
        seed=3,
    )
    _check(inp)


def test_graph_capture_and_replay_with_caller_workspace():
    from perfreport.pa.kernel.host import make_workspace, paged_attention_decode

    inp = _inputs(4096, 128, "fp8", batch=8)
    ws = make_workspace(8, 1, 64, 128, 4, "cuda")
    out = torch.empty(32, 16, 128, dtype=torch.bfloat16, device="cuda")
    kw = dict(workspace=ws, out=out, max_context=4096, min_context=4096, **inp.kwargs())
    args = (inp.query, inp.key_cache, inp.value_cache, inp.block_tables, inp.context_lens)
    paged_attention_decode(*args, **kw)  # compile outside the capture
    torch.cuda.synchronize()
    expect = out.clone()
    out.zero_()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        paged_attention_decode(*args, **kw)
    g.replay()
    torch.cuda.synchronize()
    assert torch.equal(out, expect)


def test_cache_over_4_gib_uses_64_bit_offsets():
    """Blocks past 2^31 elements: int32 offsets would wrap and read the wrong pages."""
    from perfreport.pa.kernel.host import paged_attention_decode
    from perfreport.pa.kernel.reference import paged_attention_ref

    page, dk, dv = 64, 192, 128
    nb = (2**31) // (page * dk) + 64  # K cache > 2^31 elements (> 4 GiB in bf16)
    if torch.cuda.mem_get_info()[0] < (nb * page * (dk + dv) * 2) * 1.3:
        pytest.skip("not enough GPU memory for a > 4 GiB cache")
    k = torch.empty(nb, page, 1, dk, dtype=torch.bfloat16, device="cuda")
    v = torch.empty(nb, page, 1, dv, dtype=torch.bfloat16, device="cuda")
    used = torch.arange(nb - 40, nb, device="cuda", dtype=torch.int32)  # the last 40 blocks
    k[used.long()] = torch.randn(40, page, 1, dk, device="cuda").to(torch.bfloat16)
    v[used.long()] = torch.randn(40, page, 1, dv, device="cuda").to(torch.bfloat16)
    bt = used.reshape(2, 20).contiguous()
    ctx = torch.tensor([1280, 1000], dtype=torch.int32, device="cuda")
    q = torch.randn(2 * 4, 16, dk, device="cuda").to(torch.bfloat16)
    kw = dict(scale=dk**-0.5, q_len=4)
    out = paged_attention_decode(q, k, v, bt, ctx, max_context=1280, num_partitions=2, **kw)
    ref = paged_attention_ref(q, k, v, bt, ctx, out_dtype=None, **kw)
    from perfreport.pa.bench.check import check

    assert check(out, ref, "bf16").ok


@pytest.mark.parametrize("dv,kv", [(128, "bf16"), (192, "bf16"), (128, "fp8")])
def test_seed_shapes_vectorized_5d_v(dv, kv):
    _check(_inputs(16384, dv, kv, layout="5D", v5=True))


SCALES = [("head", "head", 1.0), ("token", "token", 1.0), ("head", "tensor", 1.0), ("tensor", "token", 1.0)]


@pytest.mark.parametrize("k_mode,v_mode,gain", SCALES + [("head", "token", 1000.0)])
@pytest.mark.parametrize("mma", ["f16", "fp8"])
def test_fp8_paths_and_scales(k_mode, v_mode, gain, mma):
    """Both FP8 paths with K and V scales of any kind each; per-token V scales above 1 (gain 1000)."""
    from perfreport.pa.kernel.cache import build_inputs

    inp = build_inputs(
        [4099, 777, 64],
        q_len=4,
        q_heads=16,
        kv_heads=2,
        head_dim=192,
        v_head_dim=128,
        page_size=64,
        kv_dtype="fp8",
        scale_mode=k_mode,
        v_scale_mode=v_mode,
        v_gain=gain,
        device="cuda",
        seed=5,
    )
    _check(inp, fp8_mma=mma, num_partitions=3)


@pytest.mark.parametrize("block_n,stages", [(32, 2), (64, 3), (32, 4)])
def test_tuning_knobs_and_bf16_partials(block_n, stages):
    _check(_inputs(16384, 128, "bf16", batch=8), block_n=block_n, num_stages=stages, partials="bf16", num_partitions=5)
