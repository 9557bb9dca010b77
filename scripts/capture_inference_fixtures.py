"""Capture the inference paged-attention fixture traces (CPU, real torch.profiler runs).

    . .venv/bin/activate && python scripts/capture_inference_fixtures.py [--out fixtures]

Registers stand-in custom ops with torch.library (through scripts/stand_in_library.py) under
the exact names and positional signatures of the serving stacks
(``vllm::unified_attention_with_output``, ``_rocm_C::paged_attention``,
``aiter::paged_attention_v1``); the stand-ins compute a small real paged attention in torch. For three KV caches (BF16, FP8 as
``float8_e4m3fnuz`` storage, FP8 as ``uint8`` storage; queries always BF16) it runs a
decode step and a mixed prefill+decode step, each inside a vLLM detailed iteration
annotation whose statistics match the shapes, under
``torch.profiler.profile(activities=[CPU], record_shapes=True)``, and writes:

* ``fixtures/inference_rocm_paged_attention.json.gz``:
  ``vllm::unified_attention_with_output`` -> ``_rocm_C::paged_attention`` (5D K cache
  ``[blocks, Hkv, D/x, page, x]``, V ``[blocks, Hkv, D, page]``);
* ``fixtures/inference_aiter_paged_attention_v1.json.gz``:
  ``vllm::unified_attention_with_output`` -> ``aiter::paged_attention_v1`` (HND cache for
  the BF16 and float8 runs, NHD for the uint8 run).

Shapes (module constants): H_Q 8, H_KV 2, head dim 64, page 16. Steps, in trace order
for each cache dtype (bf16, float8_e4m3fnuz, uint8):

* decode: 4 requests, KV lengths 37, 64, 100, 130 ->
  ``execute_4_context_0(sq0sk0sqsq0sqsk0)_generation_4(sq4sk331sqsq4sqsk331)``
* mixed: 3 decode requests (64, 100, 130) + 1 prefill chunk of 16 new tokens on 8 cached
  (sk 24) -> ``execute_19_context_1(sq16sk24sqsq256sqsk384)_generation_3(sq3sk294sqsq3sqsk294)``

Seeded and re-runnable: the events, shapes and dtypes are the same on every run (only
timestamps differ). Strings are not recorded by the profiler (``Concrete Inputs`` is ''
for ``str`` args), so the traces do not carry kv_cache_dtype / kv_cache_layout.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from fixture_io import write_profile  # scripts/ is on sys.path when a script runs
from stand_in_library import define

import torch

H_Q, H_KV, D, PAGE, NUM_BLOCKS = 8, 2, 64, 16, 40
DECODE = dict(
    name="execute_4_context_0(sq0sk0sqsq0sqsk0)_generation_4(sq4sk331sqsq4sqsk331)",
    q_lens=[1, 1, 1, 1],
    kv_lens=[37, 64, 100, 130],
)
MIXED = dict(
    name="execute_19_context_1(sq16sk24sqsq256sqsk384)_generation_3(sq3sk294sqsq3sqsk294)",
    q_lens=[1, 1, 1, 16],
    kv_lens=[64, 100, 130, 24],
)
CACHES = (
    ("bf16", torch.bfloat16, "auto"),
    ("fp8_fnuz", torch.float8_e4m3fnuz, "fp8_e4m3"),
    ("fp8_uint8", torch.uint8, "fp8"),
)

_CTX: dict = {}  # the "forward context": the KV cache is not an argument of the parent


def _dequant(t: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
    if t.dtype == torch.uint8:
        t = t.view(torch.float8_e4m3fnuz)
    return t.float() * scale


def _attend(out, query, k_seq, v_seq, cu_q, kv_lens, scale):
    """k_seq(i, n) / v_seq(i, n) -> [n, Hkv, D] float for sequence i; causal over new tokens."""
    group = query.shape[1] // k_seq(0, 1).shape[1]
    for i in range(len(kv_lens)):
        a, b, n = int(cu_q[i]), int(cu_q[i + 1]), int(kv_lens[i])
        q = query[a:b].float().transpose(0, 1)  # [Hq, sq, D]
        k = k_seq(i, n).repeat_interleave(group, 1).transpose(0, 1)  # [Hq, n, D]
        v = v_seq(i, n).repeat_interleave(group, 1).transpose(0, 1)
        s = torch.matmul(q, k.transpose(1, 2)) * scale  # [Hq, sq, n]
        sq = b - a
        mask = torch.arange(n)[None, :] > (n - sq + torch.arange(sq))[:, None]
        s = s.masked_fill(mask, float("-inf"))
        out[a:b] = torch.matmul(torch.softmax(s, -1), v).transpose(0, 1).to(out.dtype)


def _pages(cache, bt_row, n, to_nhd):
    nb = (n + PAGE - 1) // PAGE
    blocks = cache[bt_row[:nb].long()]
    return to_nhd(blocks).reshape(nb * PAGE, H_KV, -1)[:n]


def rocm_paged_attention(
    out,
    exp_sums,
    max_logits,
    tmp_out,
    query,
    key_cache,
    value_cache,
    num_kv_heads,
    scale,
    block_tables,
    seq_lens,
    query_start_loc,
    block_size,
    max_seq_len,
    alibi_slopes,
    kv_cache_dtype,
    k_scale,
    v_scale,
    fp8_out_scale,
    mfma_type,
):
    # K [blocks, Hkv, D/x, page, x] -> [blocks, page, Hkv, D]; V [blocks, Hkv, D, page] -> same
    k5 = lambda c: c.permute(0, 3, 1, 2, 4).flatten(3)
    v4 = lambda c: c.permute(0, 3, 1, 2)
    ks = lambda i, n: _dequant(_pages(key_cache, block_tables[i], n, k5), k_scale)
    vs = lambda i, n: _dequant(_pages(value_cache, block_tables[i], n, v4), v_scale)
    _attend(out, query, ks, vs, query_start_loc.tolist(), seq_lens.tolist(), scale)


def aiter_paged_attention_v1(
    out,
    workspace_buffer,
    query,
    key_cache,
    value_cache,
    scale,
    block_tables,
    cu_query_lens,
    context_lens,
    max_context_len,
    alibi_slopes,
    kv_cache_dtype,
    kv_cache_layout,
    logits_soft_cap,
    k_scale,
    v_scale,
    fp8_out_scale,
    partition_size,
    mtp,
    sliding_window,
):
    to_nhd = (lambda c: c.permute(0, 2, 1, 3)) if kv_cache_layout == "HND" else (lambda c: c)
    ks = lambda i, n: _dequant(_pages(key_cache, block_tables[i], n, to_nhd), k_scale)
    vs = lambda i, n: _dequant(_pages(value_cache, block_tables[i], n, to_nhd), v_scale)
    _attend(out, query, ks, vs, cu_query_lens.tolist(), context_lens.tolist(), scale)


def unified_attention_with_output(query, key, value, output, layer_name, output_scale=None, output_block_scale=None):
    c = _CTX[layer_name]
    scale = D**-0.5
    if c["backend"] == "rocm":
        n = query.shape[0]
        parts = torch.empty(n, H_Q, 1, dtype=torch.float32)
        torch.ops._rocm_C.paged_attention(
            output,
            parts,
            parts,
            output,
            query,
            c["k"],
            c["v"],
            H_KV,
            scale,
            c["bt"],
            c["kv_lens"],
            c["cu_q"],
            PAGE,
            int(max(c["kv_lens"].tolist())),
            None,
            c["kv_dtype"],
            c["k_scale"],
            c["v_scale"],
            None,
            "fp8",
        )
    else:
        ws = torch.empty(64, dtype=torch.uint8)
        torch.ops.aiter.paged_attention_v1(
            output,
            ws,
            query,
            c["k"],
            c["v"],
            scale,
            c["bt"],
            c["cu_q"],
            c["kv_lens"],
            int(max(c["kv_lens"].tolist())),
            None,
            c["kv_dtype"],
            c["layout"],
            0.0,
            c["k_scale"],
            c["v_scale"],
            None,
            256,
            1,
            0,
        )


def register_ops() -> None:
    define(
        "vllm",
        "unified_attention_with_output(Tensor query, Tensor key, Tensor value, "
        "Tensor(a!) output, str layer_name, Tensor? output_scale=None, "
        "Tensor? output_block_scale=None) -> ()",
        unified_attention_with_output,
    )
    define(
        "_rocm_C",
        "paged_attention(Tensor(a!) out, Tensor exp_sums, Tensor max_logits, "
        "Tensor tmp_out, Tensor query, Tensor key_cache, Tensor value_cache, "
        "int num_kv_heads, float scale, Tensor block_tables, Tensor seq_lens, "
        "Tensor? query_start_loc, int block_size, int max_seq_len, Tensor? alibi_slopes, "
        "str kv_cache_dtype, Tensor k_scale, Tensor v_scale, Tensor? fp8_out_scale, "
        "str mfma_type) -> ()",
        rocm_paged_attention,
    )
    define(
        "aiter",
        "paged_attention_v1(Tensor(a!) out, Tensor workspace_buffer, "
        "Tensor query, Tensor key_cache, Tensor value_cache, float scale, "
        "Tensor block_tables, Tensor? cu_query_lens, Tensor context_lens, "
        "int max_context_len, Tensor? alibi_slopes, str kv_cache_dtype, "
        "str kv_cache_layout, float logits_soft_cap, Tensor k_scale, Tensor v_scale, "
        "Tensor? fp8_out_scale, int partition_size, int mtp, int sliding_window) -> ()",
        aiter_paged_attention_v1,
    )


def _make_cache(dtype, shape, gen):
    x = torch.randn(shape, generator=gen) * 0.5
    if dtype == torch.bfloat16:
        return x.to(torch.bfloat16)
    x = x.to(torch.float8_e4m3fnuz)
    return x.view(torch.uint8) if dtype == torch.uint8 else x


def _setup(backend: str, dtype, kv_dtype_str: str, layout: str, gen) -> dict:
    if backend == "rocm":
        x = 16 // (2 if dtype == torch.bfloat16 else 1)
        k = _make_cache(dtype, (NUM_BLOCKS, H_KV, D // x, PAGE, x), gen)
        v = _make_cache(dtype, (NUM_BLOCKS, H_KV, D, PAGE), gen)
    else:
        shape = (NUM_BLOCKS, H_KV, PAGE, D) if layout == "HND" else (NUM_BLOCKS, PAGE, H_KV, D)
        k, v = _make_cache(dtype, shape, gen), _make_cache(dtype, shape, gen)
    return dict(
        backend=backend,
        k=k,
        v=v,
        kv_dtype=kv_dtype_str,
        layout=layout,
        k_scale=torch.tensor([1.0]),
        v_scale=torch.tensor([1.0]),
    )


def _step(ctx: dict, step: dict, gen) -> None:
    q_lens, kv_lens = step["q_lens"], step["kv_lens"]
    n = sum(q_lens)
    cu = [0]
    for s in q_lens:
        cu.append(cu[-1] + s)
    max_blocks = (max(kv_lens) + PAGE - 1) // PAGE
    perm = torch.randperm(NUM_BLOCKS, generator=gen)[: len(kv_lens) * max_blocks]
    ctx.update(
        bt=perm.view(len(kv_lens), max_blocks).to(torch.int32),
        kv_lens=torch.tensor(kv_lens, dtype=torch.int32),
        cu_q=torch.tensor(cu, dtype=torch.int32),
    )
    q = torch.randn(n, H_Q, D, generator=gen).to(torch.bfloat16)
    k = torch.randn(n, H_KV, D, generator=gen).to(torch.bfloat16)
    v = torch.randn(n, H_KV, D, generator=gen).to(torch.bfloat16)
    out = torch.empty(n, H_Q, D, dtype=torch.bfloat16)
    with torch.profiler.record_function(step["name"]):
        torch.ops.vllm.unified_attention_with_output(q, k, v, out, "model.layers.0.attn")
    if not torch.isfinite(out.float()).all():
        raise SystemExit("stand-in attention produced non-finite output")


def capture(backend: str, path: Path) -> int:
    register_ops()
    gen = torch.Generator().manual_seed(1234)
    runs = []
    for tag, dtype, kv_str in CACHES:
        layout = "NHD" if (backend == "aiter" and tag == "fp8_uint8") else "HND"
        runs.append(_setup(backend, dtype, kv_str, layout, gen))
    act = [torch.profiler.ProfilerActivity.CPU]
    with torch.profiler.profile(activities=act, record_shapes=True) as prof:
        for ctx in runs:
            _CTX["model.layers.0.attn"] = ctx
            for step in (DECODE, MIXED):
                _step(ctx, step, gen)
    return write_profile(
        prof,
        path,
        {"generator": "scripts/capture_inference_fixtures.py", "backend": backend, "torch": torch.__version__},
    )


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(Path(__file__).resolve().parents[1] / "fixtures"))
    a = ap.parse_args(argv)
    torch.manual_seed(0)
    for backend, name in (
        ("rocm", "inference_rocm_paged_attention.json.gz"),
        ("aiter", "inference_aiter_paged_attention_v1.json.gz"),
    ):
        size = capture(backend, Path(a.out) / name)
        print(f"{name}: {size} bytes", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
