"""Capture the serving-op fixture traces (CPU, real torch.profiler runs).

    . .venv/bin/activate && python scripts/capture_serving_fixtures.py [--out fixtures]

Stand-in custom ops registered with torch.library under the exact names and positional
signatures of the serving stacks compute small real results in torch, run under
``torch.profiler.profile(activities=[CPU], record_shapes=True)``:

* ``fixtures/serving_moe.json.gz``: ``vllm::moe_forward(hidden_states[T,H],
  router_logits[T,E], layer_name)`` whose body runs the triton_kernels routing
  ``TopK`` / ``SortTokens`` autograd Functions (cpu_ops named by class) and views the
  MXFP4 expert weights as ``unsigned char`` ``[E, H/2, 2I]`` / ``[E, I/2, H]`` (the layout
  of the vLLM GPT-OSS decode capture) before a reference MoE on the dequantized weights;
  ``vllm::outplace_fused_experts(hidden, w1[E,2I,H], w2[E,H,I], topk_weights, topk_ids)``
  in BF16, once with E=8, k=2 and once with E=1, k=1 (a dense gated MLP whose two GEMMs
  are recorded as ``aten::mm`` children); ``_moe_C::topk_softmax`` and
  ``_moe_C::moe_align_block_size``; aiter's ``aiter::fmoe_g1u1(out, input, gate, down,
  sorted_token_ids, sorted_weights, sorted_expert_ids, num_valid_ids, topk, input_scale,
  fc1_scale, fc2_scale)`` with FP8 (e4m3fnuz) activations and weights and per-channel
  scales, and the two-stage ``aiter::ck_moe_stage1`` / ``ck_moe_stage2`` in BF16, all on
  the same sorted routing (token·k + slot ids grouped by expert in blocks of 4); vLLM's
  CUTLASS grouped GEMM ``_C::cutlass_moe_mm`` (first expert GEMM, FP8 e4m3fn rows permuted
  by expert, per-tensor activation scale, per-expert weight scales).

* ``fixtures/serving_kv_cache.json.gz``: ``_C_cache_ops::reshape_and_cache_flash`` with a
  BF16 cache and an FP8 cache stored as ``uint8``, ``_C_cache_ops::reshape_and_cache``
  (5-D K cache), ``_C_cache_ops::concat_and_cache_mla`` and ``sglang::store_cache(k, v,
  k_cache, v_cache, indices, *, row_bytes, num_split, size_limit)`` (SGLang
  python/sglang/jit_kernel/kvcache.py: 2-d new K/V ``[T, H*D]`` and cache rows ``[slots, H*D]``);
* ``fixtures/serving_quant.json.gz``: ``_C::static_scaled_fp8_quant``,
  ``_C::dynamic_scaled_fp8_quant``, ``_C::dynamic_per_token_scaled_fp8_quant`` (result,
  input, scale, ...) and ``_C::per_token_group_fp8_quant(input, output_q, output_s, ...)``;
* ``fixtures/serving_inductor.json.gz``: Inductor Triton kernel cpu_ops recorded the way
  Inductor's launcher records them (``torch._C._profiler._RecordFunctionFast(kernel name,
  [kernel arguments])``): pointwise, reduction, persistent reduction, a gather and an mm
  template, each computing its result in torch inside the record;
* ``fixtures/serving_vision.json.gz``: ``aten::max_pool2d_with_indices`` and its backward,
  ``aten::upsample_nearest1d/2d`` (real aten ops on the CPU), ``aten::miopen_batch_norm_backward``
  (a CPU kernel registered for the real aten schema) and ``aiter::_groupnorm_run(y,
  workspace, input, num_groups, weight, bias, eps)``.

MoE sizes (module constants): T 6 tokens, H 64, I 96, E 8, k 2 (2I != H, so the
packed uint8 shapes cannot also be read as 8-bit weights). Seeded: shapes and dtypes are
the same on every run (only timestamps differ).
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from fixture_io import write_profile  # scripts/ is on sys.path when a script runs

import torch

T, H, I, E, K = 6, 64, 96, 8, 2
_LIBS: list = []
_LAYERS: dict = {}
# FP4 E2M1 code points (OCP MX v1.0 §5.3.3): sign bit, 2 exponent bits, 1 mantissa bit
_FP4 = torch.tensor([0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0,
                     -0.0, -0.5, -1.0, -1.5, -2.0, -3.0, -4.0, -6.0])


def _define(ns: str, schema: str, fn) -> None:
    lib = torch.library.Library(ns, "FRAGMENT")
    lib.define(schema)
    lib.impl(schema.split("(", 1)[0], fn, "CPU")
    _LIBS.append(lib)


# ---- triton_kernels routing stand-ins (autograd Functions: cpu_op named by class) -----------
class TopK(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, k, apply_softmax, dim, return_bitmatrix, y_indx, n_rows):
        vals, idx = torch.topk(x.float(), k, dim=dim)
        if apply_softmax:
            vals = torch.softmax(vals, dim=-1)
        words = (x.shape[1] + 31) // 32
        bits = torch.zeros(x.shape[0], words, dtype=torch.int64)
        bits.scatter_add_(1, idx // 32, torch.ones_like(idx) << (idx % 32))
        return vals.to(x.dtype), idx.to(torch.int16), bits.to(torch.uint32)


class _Bitmatrix:                       # a Python object: the profiler does not record it
    def __init__(self, data):
        self.data = data


class SortTokens(torch.autograd.Function):
    @staticmethod
    def forward(ctx, expt_scal, expt_indx, n_expts_tot, bitmatrix):
        flat = expt_indx.reshape(-1).long()
        hist = torch.bincount(flat, minlength=n_expts_tot).to(torch.int32)
        order = torch.argsort(flat, stable=True).to(torch.int32)
        return hist, order, expt_scal.reshape(-1)[order.long()]


def _dequant_mxfp4(packed: torch.Tensor, scales: torch.Tensor) -> torch.Tensor:
    """[E, K/2, N] uint8 (two E2M1 values per byte along K) + [E, K/32, N] E8M0 -> [E, K, N]."""
    lo, hi = _FP4[(packed & 0xF).long()], _FP4[(packed >> 4).long()]
    vals = torch.stack((lo, hi), dim=2).reshape(packed.shape[0], -1, packed.shape[2])
    return vals * torch.exp2(scales.float() - 127.0).repeat_interleave(32, dim=1)


def _expert_mlp(x, w1, w2, topk_w, topk_i):
    """Reference: out[t] = Σ_j w_tj · W2(e) · silu(gate) · up, with W1(e) = [gate; up] (2-d mm).
    ``w1(e)`` / ``w2(e)`` return expert e's [2I, H] / [H, I] matrices."""
    out = torch.zeros(x.shape[0], x.shape[1], dtype=torch.float32)
    for t in range(x.shape[0]):
        for j in range(topk_i.shape[1]):
            e = int(topk_i[t, j])
            h = torch.mm(x[t:t + 1].float(), w1(e).float().t())
            g, u = h.chunk(2, dim=-1)
            y = torch.mm(torch.nn.functional.silu(g) * u, w2(e).float().t())
            out[t] += float(topk_w[t, j]) * y[0]
    return out.to(x.dtype)


def moe_forward(hidden_states, router_logits, layer_name):
    layer = _LAYERS[layer_name]
    vals, idx, bits = TopK.apply(router_logits, K, True, 1, True, None, None)
    SortTokens.apply(vals, idx, router_logits.shape[1], _Bitmatrix(bits))
    layer["w13"].view(E, H // 2, 2 * I)        # the packed weights handed to the kernels,
    layer["w2"].view(E, I // 2, H)             # viewed as in the real capture
    w1f, w2f = layer["w13_flat"], layer["w2_flat"]    # dequantized at load time, 2-d
    return _expert_mlp(hidden_states, lambda e: w1f[e * 2 * I:(e + 1) * 2 * I],
                       lambda e: w2f[e * H:(e + 1) * H], vals.float(), idx.long())


def outplace_fused_experts(hidden_states, w1, w2, topk_weights, topk_ids):
    return _expert_mlp(hidden_states, lambda e: w1[e], lambda e: w2[e], topk_weights, topk_ids)


def topk_softmax(topk_weights, topk_indices, token_expert_indices, gating_output, renormalize):
    p = torch.softmax(gating_output.float(), dim=-1)
    v, i = torch.topk(p, topk_weights.shape[1], dim=-1)
    if renormalize:
        v = v / v.sum(-1, keepdim=True)
    topk_weights.copy_(v)
    topk_indices.copy_(i.to(topk_indices.dtype))
    token_expert_indices.copy_(i.to(token_expert_indices.dtype))


def moe_align_block_size(topk_ids, num_experts, block_size, sorted_token_ids, experts_ids,
                         num_tokens_post_pad):
    flat = topk_ids.reshape(-1).long()
    sorted_token_ids.fill_(flat.numel())
    pos = 0
    for e in range(num_experts):
        hits = torch.nonzero(flat == e).reshape(-1)
        n = (hits.numel() + block_size - 1) // block_size * block_size
        sorted_token_ids[pos:pos + hits.numel()] = hits.to(sorted_token_ids.dtype)
        experts_ids[pos // block_size:(pos + n) // block_size] = e
        pos += n
    num_tokens_post_pad.fill_(pos)


def _sorted_routing(topk_ids, block):
    """aiter-style sorting: (sorted ids = t·k + j padded per expert to a block multiple with
    the sentinel T·k, expert id per block, number of valid entries)."""
    n, k = topk_ids.shape
    ids, experts = [], []
    for e in range(E):
        hits = [t * k + j for t in range(n) for j in range(k) if int(topk_ids[t, j]) == e]
        while len(hits) % block:
            hits.append(n * k)
        ids += hits
        experts += [e] * (len(hits) // block)
    return (torch.tensor(ids, dtype=torch.int32), torch.tensor(experts, dtype=torch.int32),
            torch.tensor([len(ids)], dtype=torch.int32))


def _by_block(sorted_ids, sorted_experts, n_tokens, k, fn):
    block = sorted_ids.numel() // sorted_experts.numel()
    for b, e in enumerate(sorted_experts.tolist()):
        for i in sorted_ids[b * block:(b + 1) * block].tolist():
            if i < n_tokens * k:
                fn(e, *divmod(i, k))


def fmoe_g1u1(out, input, gate, down, sorted_token_ids, sorted_weights, sorted_expert_ids,
              num_valid_ids, topk, input_scale, fc1_scale, fc2_scale):
    acc = torch.zeros(out.shape, dtype=torch.float32)

    def one(e, t, j):
        x = input[t].float() * input_scale[t]
        h = gate[e].float() * fc1_scale[e] @ x
        g, u = h.chunk(2)
        acc[t] += float(sorted_weights[t * topk + j]) * (down[e].float() * fc2_scale[e] @ (
            torch.nn.functional.silu(g) * u))
    _by_block(sorted_token_ids, sorted_expert_ids, input.shape[0], topk, one)
    out.copy_(acc)


def ck_moe_stage1(hidden_states, w1, w2, sorted_token_ids, sorted_expert_ids, num_valid_ids,
                  out, topk, kernelName, w1_scale, a1_scale, block_m, sorted_weights):
    def one(e, t, j):
        g, u = (w1[e].float() @ hidden_states[t].float()).chunk(2)
        out[t, j] = (torch.nn.functional.silu(g) * u).to(out.dtype)
    _by_block(sorted_token_ids, sorted_expert_ids, hidden_states.shape[0], topk, one)


def ck_moe_stage2(inter_states, w1, w2, sorted_token_ids, sorted_expert_ids, num_valid_ids,
                  out, topk, kernelName, w2_scale, a2_scale, block_m, sorted_weights):
    acc = torch.zeros(out.shape, dtype=torch.float32)

    def one(e, t, j):
        acc[t] += float(sorted_weights[t * topk + j]) * (w2[e].float() @ inter_states[t, j].float())
    _by_block(sorted_token_ids, sorted_expert_ids, inter_states.shape[0], topk, one)
    out.copy_(acc.to(out.dtype))


def cutlass_moe_mm(out_tensors, a_tensors, b_tensors, a_scales, b_scales, expert_offsets,
                   problem_sizes, a_strides, b_strides, c_strides, per_act_token, per_out_ch):
    offs = expert_offsets.tolist() + [a_tensors.shape[0]]
    for e in range(b_tensors.shape[0]):
        lo, hi = offs[e], offs[e + 1]
        if hi > lo:
            a = a_tensors[lo:hi].float() * a_scales
            out_tensors[lo:hi] = (a @ (b_tensors[e].float() * b_scales[e])).to(out_tensors.dtype)


def register_ops() -> None:
    if _LIBS:
        return
    _define("vllm", "moe_forward(Tensor hidden_states, Tensor router_logits, str layer_name)"
            " -> Tensor", moe_forward)
    _define("vllm", "outplace_fused_experts(Tensor hidden_states, Tensor w1, Tensor w2, "
            "Tensor topk_weights, Tensor topk_ids) -> Tensor", outplace_fused_experts)
    _define("_moe_C", "topk_softmax(Tensor(a!) topk_weights, Tensor(b!) topk_indices, "
            "Tensor(c!) token_expert_indices, Tensor gating_output, bool renormalize) -> ()",
            topk_softmax)
    _define("_moe_C", "moe_align_block_size(Tensor topk_ids, int num_experts, int block_size, "
            "Tensor(a!) sorted_token_ids, Tensor(b!) experts_ids, "
            "Tensor(c!) num_tokens_post_pad) -> ()", moe_align_block_size)
    _define("aiter", "fmoe_g1u1(Tensor(a!) out, Tensor input, Tensor gate, Tensor down, "
            "Tensor sorted_token_ids, Tensor sorted_weights, Tensor sorted_expert_ids, "
            "Tensor num_valid_ids, int topk, Tensor input_scale, Tensor fc1_scale, "
            "Tensor fc2_scale) -> ()", fmoe_g1u1)
    stage = ("Tensor sorted_token_ids, Tensor sorted_expert_ids, Tensor num_valid_ids, "
             "Tensor(a!) out, int topk, str kernelName, Tensor? {s}_scale, Tensor? {a}_scale, "
             "int block_m, Tensor? sorted_weights) -> ()")
    _define("aiter", "ck_moe_stage1(Tensor hidden_states, Tensor w1, Tensor w2, "
            + stage.format(s="w1", a="a1"), ck_moe_stage1)
    _define("aiter", "ck_moe_stage2(Tensor inter_states, Tensor w1, Tensor w2, "
            + stage.format(s="w2", a="a2"), ck_moe_stage2)
    _define("_C", "cutlass_moe_mm(Tensor(a!) out_tensors, Tensor a_tensors, Tensor b_tensors, "
            "Tensor a_scales, Tensor b_scales, Tensor expert_offsets, Tensor problem_sizes, "
            "Tensor a_strides, Tensor b_strides, Tensor c_strides, bool per_act_token, "
            "bool per_out_ch) -> ()", cutlass_moe_mm)
    _define("_C_cache_ops", "reshape_and_cache_flash(Tensor key, Tensor value, "
            "Tensor(a!) key_cache, Tensor(b!) value_cache, Tensor slot_mapping, "
            "str kv_cache_dtype, Tensor k_scale, Tensor v_scale) -> ()", reshape_and_cache_flash)
    _define("_C_cache_ops", "reshape_and_cache(Tensor key, Tensor value, Tensor(a!) key_cache, "
            "Tensor(b!) value_cache, Tensor slot_mapping, str kv_cache_dtype, Tensor k_scale, "
            "Tensor v_scale) -> ()", reshape_and_cache)
    _define("_C_cache_ops", "concat_and_cache_mla(Tensor kv_c, Tensor k_pe, Tensor(a!) kv_cache, "
            "Tensor slot_mapping, str kv_cache_dtype, Tensor scale) -> ()", concat_and_cache_mla)
    _define("sglang", "store_cache(Tensor k, Tensor v, Tensor(a!) k_cache, Tensor(b!) v_cache, "
            "Tensor indices, *, int row_bytes=0, int num_split=0, int size_limit=0) -> ()",
            store_cache)
    for name, fn in (("static_scaled_fp8_quant", _quant_static),
                     ("dynamic_scaled_fp8_quant", _quant_dynamic_tensor),
                     ("dynamic_per_token_scaled_fp8_quant", _quant_dynamic_token)):
        tail = ", Tensor? scale_ub=None" if "per_token" in name else ""
        _define("_C", f"{name}(Tensor(a!) result, Tensor input, Tensor(b!) scale{tail}) -> ()", fn)
    _define("_C", "per_token_group_fp8_quant(Tensor input, Tensor(a!) output_q, "
            "Tensor(b!) output_s, int group_size, float eps, float fp8_min, float fp8_max, "
            "bool scale_ue8m0) -> ()", _quant_group)
    _define("aiter", "_groupnorm_run(Tensor(a!) y, Tensor(b!) workspace, Tensor input, "
            "int num_groups, Tensor weight, Tensor bias, float eps) -> ()", _groupnorm_run)
    lib = torch.library.Library("aten", "IMPL")      # CPU kernel for the real aten schema
    lib.impl("miopen_batch_norm_backward", _miopen_bn_backward, "CPU")
    _LIBS.append(lib)


# ---- KV-cache writes ------------------------------------------------------------------------
KV_T, KV_H, KV_D, PAGE, BLOCKS, MLA_L, MLA_R = 5, 2, 16, 4, 6, 32, 8


def _store(cache_rows: torch.Tensor, slots, new: torch.Tensor, scale=None) -> None:
    """cache_rows: [slots, ...] view of the cache; FP8-as-uint8 caches get scaled e4m3 bytes."""
    if cache_rows.dtype == torch.uint8:
        new = (new.float() / scale).to(torch.float8_e4m3fn).view(torch.uint8)
    cache_rows[slots.long()] = new.reshape(new.shape[0], *cache_rows.shape[1:]).to(cache_rows.dtype)


def reshape_and_cache_flash(key, value, key_cache, value_cache, slot_mapping, kv_cache_dtype,
                            k_scale, v_scale):
    # NHD cache [blocks, page, Hkv, D] -> rows [blocks·page, Hkv, D]
    _store(key_cache.view(-1, *key_cache.shape[2:]), slot_mapping, key, k_scale)
    _store(value_cache.view(-1, *value_cache.shape[2:]), slot_mapping, value, v_scale)


def reshape_and_cache(key, value, key_cache, value_cache, slot_mapping, kv_cache_dtype,
                      k_scale, v_scale):
    # K [blocks, Hkv, D/x, page, x], V [blocks, Hkv, D, page]
    for i, slot in enumerate(slot_mapping.tolist()):
        b, o = divmod(slot, key_cache.shape[3])
        x = key_cache.shape[4]
        key_cache[b, :, :, o, :] = key[i].reshape(key.shape[1], -1, x).to(key_cache.dtype)
        value_cache[b, :, :, o] = value[i].to(value_cache.dtype)


def concat_and_cache_mla(kv_c, k_pe, kv_cache, slot_mapping, kv_cache_dtype, scale):
    _store(kv_cache.view(-1, kv_cache.shape[2]), slot_mapping, torch.cat((kv_c, k_pe), -1))


def store_cache(k, v, k_cache, v_cache, indices, *, row_bytes=0, num_split=0, size_limit=0):
    _store(k_cache, indices, k)
    _store(v_cache, indices, v)


def _kv_steps(gen):
    bf = lambda *s: torch.randn(*s, generator=gen).to(torch.bfloat16)
    key, value = bf(KV_T, KV_H, KV_D), bf(KV_T, KV_H, KV_D)
    slots = torch.randperm(BLOCKS * PAGE, generator=gen)[:KV_T]
    one = torch.tensor(1.0)
    nhd = (BLOCKS, PAGE, KV_H, KV_D)
    bf_cache = [torch.zeros(nhd, dtype=torch.bfloat16) for _ in range(2)]
    u8_cache = [torch.zeros(nhd, dtype=torch.uint8) for _ in range(2)]
    x = 8
    k5 = torch.zeros(BLOCKS, KV_H, KV_D // x, PAGE, x, dtype=torch.bfloat16)
    v4 = torch.zeros(BLOCKS, KV_H, KV_D, PAGE, dtype=torch.bfloat16)
    kv_c, k_pe = bf(KV_T, MLA_L), bf(KV_T, MLA_R)
    mla = torch.zeros(BLOCKS, PAGE, MLA_L + MLA_R, dtype=torch.bfloat16)
    sg = [torch.zeros(BLOCKS * PAGE, KV_H * KV_D, dtype=torch.bfloat16) for _ in range(2)]

    def run():
        ops = torch.ops._C_cache_ops
        ops.reshape_and_cache_flash(key, value, *bf_cache, slots, "auto", one, one)
        ops.reshape_and_cache_flash(key, value, *u8_cache, slots, "fp8", one, one)
        ops.reshape_and_cache(key, value, k5, v4, slots, "auto", one, one)
        ops.concat_and_cache_mla(kv_c, k_pe, mla, slots, "auto", one)
        torch.ops.sglang.store_cache(key.view(KV_T, -1), value.view(KV_T, -1), *sg, slots,
                                     row_bytes=KV_H * KV_D * 2, num_split=0,
                                     size_limit=BLOCKS * PAGE)
    return run


# ---- activation quantization ------------------------------------------------------------------
FP8_MAX = 448.0


def _q(x, scale):
    return (x.float() / scale).clamp(-FP8_MAX, FP8_MAX).to(torch.float8_e4m3fn)


def _quant_static(result, input, scale):
    result.copy_(_q(input, scale))


def _quant_dynamic_tensor(result, input, scale):
    scale.fill_(float(input.float().abs().max()) / FP8_MAX)
    result.copy_(_q(input, scale))


def _quant_dynamic_token(result, input, scale, scale_ub=None):
    scale.copy_(input.float().abs().amax(-1, keepdim=True) / FP8_MAX)
    result.copy_(_q(input, scale))


def _quant_group(input, output_q, output_s, group_size, eps, fp8_min, fp8_max, scale_ue8m0):
    g = input.float().reshape(input.shape[0], -1, group_size)
    s = (g.abs().amax(-1, keepdim=True).clamp_min(eps) / fp8_max)
    output_s.copy_(s.squeeze(-1))
    output_q.copy_((g / s).clamp(fp8_min, fp8_max).reshape(input.shape).to(output_q.dtype))


Q_T, Q_H, Q_GROUP = 8, 64, 32


def _quant_steps(gen):
    x = torch.randn(Q_T, Q_H, generator=gen).to(torch.bfloat16)
    out = lambda: torch.empty(Q_T, Q_H, dtype=torch.float8_e4m3fn)

    def run():
        torch.ops._C.static_scaled_fp8_quant(out(), x, torch.tensor([0.01]))
        torch.ops._C.dynamic_scaled_fp8_quant(out(), x, torch.empty(1))
        torch.ops._C.dynamic_per_token_scaled_fp8_quant(out(), x, torch.empty(Q_T, 1), None)
        torch.ops._C.per_token_group_fp8_quant(x, out(), torch.empty(Q_T, Q_H // Q_GROUP),
                                               Q_GROUP, 1e-10, -FP8_MAX, FP8_MAX, False)
    return run


# ---- Inductor Triton kernels (recorded as Inductor's launcher records them) ------------------
def _inductor_steps(gen):
    a = torch.randn(16, 32, generator=gen).to(torch.bfloat16)
    bias = torch.randn(32, generator=gen).to(torch.bfloat16)
    table = torch.randn(1000, 32, generator=gen)
    rows = torch.randint(0, 1000, (16,), generator=gen)
    w = torch.randn(32, 24, generator=gen).to(torch.bfloat16)
    rec = torch._C._profiler._RecordFunctionFast

    def run():
        out = torch.empty_like(a)
        with rec("triton_poi_fused_add_mul_0", [a, bias, out, 512]):
            torch.mul(torch.add(a, bias), 2, out=out)
        ms = torch.empty(16, 1)
        with rec("triton_red_fused__to_copy_mean_pow_1", [a, ms, 16, 32]):
            ms.copy_(a.float().pow(2).mean(-1, keepdim=True))
        sm = torch.randn(16, 32)
        with rec("triton_per_fused__softmax_2", [sm, 16, 32]):
            sm.copy_(torch.softmax(sm, -1))
        g = torch.empty(16, 32, dtype=torch.bfloat16)
        with rec("triton_poi_fused__to_copy_embedding_3", [rows, table, g, 512]):
            g.copy_(table[rows])
        c = torch.empty(16, 24, dtype=torch.bfloat16)
        with rec("triton_tem_fused_mm_4", [a, w, c]):
            torch.mm(a, w, out=c)
    return run


# ---- pooling / resampling / norms -----------------------------------------------------------
def _miopen_bn_backward(input, grad_output, weight, running_mean, running_var, save_mean,
                        save_var, epsilon):
    dims = [0] + list(range(2, input.dim()))
    shape = [1, -1] + [1] * (input.dim() - 2)
    xhat = (input - save_mean.view(shape)) * save_var.view(shape)
    gb = grad_output.sum(dims)
    gw = (grad_output * xhat).sum(dims)
    n = input.numel() / input.shape[1]
    gx = weight.view(shape) * save_var.view(shape) / n * (
        n * grad_output - gb.view(shape) - xhat * gw.view(shape))
    return gx, gw, gb


def _groupnorm_run(y, workspace, input, num_groups, weight, bias, eps):
    y.copy_(torch.nn.functional.group_norm(input, num_groups, weight, bias, eps))


def _vision_steps(gen):
    import torch.nn.functional as F
    x = torch.randn(2, 4, 8, 8, generator=gen)
    seq = torch.randn(2, 4, 5, generator=gen)
    mean, invstd = x.mean((0, 2, 3)), 1 / (x.var((0, 2, 3)) + 1e-5).sqrt()
    gn_in = torch.randn(2, 8, 4, 4, generator=gen).to(torch.bfloat16)
    gw, gb = torch.ones(8, dtype=torch.bfloat16), torch.zeros(8, dtype=torch.bfloat16)

    def run():
        with torch.enable_grad():
            xg = x.clone().requires_grad_(True)
            y, _ = F.max_pool2d(xg, 3, 2, 1, return_indices=True)
            y.sum().backward()
        F.interpolate(x, scale_factor=2, mode="nearest")
        F.interpolate(seq, size=9, mode="nearest")
        torch.ops.aten.miopen_batch_norm_backward(x, torch.ones_like(x), torch.ones(4), None,
                                                  None, mean, invstd, 1e-5)
        y2 = torch.empty_like(gn_in)
        torch.ops.aiter._groupnorm_run(y2, torch.empty(64), gn_in, 2, gw, gb, 1e-5)
    return run


def _moe_steps(gen):
    """Weights and inputs made outside the profiled region; returns the profiled steps."""
    packed = lambda *s: torch.randint(0, 256, s, generator=gen, dtype=torch.uint8)
    scale = lambda *s: torch.randint(120, 128, s, generator=gen, dtype=torch.uint8)
    w13, w2 = packed(E, H // 2, 2 * I), packed(E, I // 2, H)
    _LAYERS["model.layers.0.mlp.experts"] = dict(
        w13=w13, w2=w2,
        w13_flat=_dequant_mxfp4(w13, scale(E, H // 32, 2 * I)).transpose(1, 2).reshape(-1, H),
        w2_flat=_dequant_mxfp4(w2, scale(E, I // 32, H)).transpose(1, 2).reshape(-1, I))
    bf = lambda *s: (torch.randn(*s, generator=gen) * 0.1).to(torch.bfloat16)
    x, logits = bf(T, H), bf(T, E)
    w1, w2, w1d, w2d = bf(E, 2 * I, H), bf(E, H, I), bf(1, 2 * I, H), bf(1, H, I)
    tw = torch.softmax(torch.randn(T, K, generator=gen), -1)
    ti = torch.stack([torch.randperm(E, generator=gen)[:K] for _ in range(T)]).to(torch.int32)
    fp8 = torch.float8_e4m3fnuz
    aiter_w = dict(gate=w1.float().to(fp8), down=w2.float().to(fp8),
                   x=x.float().to(fp8), x_scale=torch.ones(T, 1),
                   fc1_scale=torch.ones(E, 2 * I, 1), fc2_scale=torch.ones(E, H, 1))
    order = torch.argsort(ti.reshape(-1).long(), stable=True)
    counts = torch.bincount(ti.reshape(-1).long(), minlength=E)
    cut = dict(a=x.float()[order // K].to(torch.float8_e4m3fn),
               b=w1.float().to(torch.float8_e4m3fn).transpose(1, 2),      # [E, H, 2I] view
               offsets=(torch.cumsum(counts, 0) - counts).to(torch.int32),
               sizes=torch.stack([counts, torch.full((E,), 2 * I), torch.full((E,), H)], 1).to(torch.int32))
    aiter_w["cutlass"] = cut
    return lambda: _moe_run(x, logits, w1, w2, w1d, w2d, tw, ti, aiter_w)


def _aiter_run(x, w1, w2, tw, ti, a) -> None:
    sid, seid, nvalid = _sorted_routing(ti, 4)
    sw = tw.reshape(-1)
    out = torch.empty(T, H, dtype=torch.bfloat16)
    torch.ops.aiter.fmoe_g1u1(out, a["x"], a["gate"], a["down"], sid, sw, seid, nvalid, K,
                              a["x_scale"], a["fc1_scale"], a["fc2_scale"])
    inter = torch.empty(T, K, I, dtype=torch.bfloat16)
    torch.ops.aiter.ck_moe_stage1(x, w1, w2, sid, seid, nvalid, inter, K, "", None, None, 4, None)
    out2 = torch.empty(T, H, dtype=torch.bfloat16)
    torch.ops.aiter.ck_moe_stage2(inter, w1, w2, sid, seid, nvalid, out2, K, "", None, None, 4, sw)
    c = a["cutlass"]
    out3 = torch.empty(T * K, 2 * I, dtype=torch.bfloat16)
    strides = lambda v: torch.full((E,), v, dtype=torch.int64)
    torch.ops._C.cutlass_moe_mm(out3, c["a"], c["b"], torch.ones(1), torch.ones(E, 1, 1),
                                c["offsets"], c["sizes"], strides(H), strides(H), strides(2 * I),
                                False, False)
    for o in (out, out2, out3):
        if not torch.isfinite(o.float()).all():
            raise SystemExit("stand-in aiter MoE produced non-finite output")


def _moe_run(x, logits, w1, w2, w1d, w2d, tw, ti, aiter_w) -> None:
    _aiter_run(x, w1, w2, tw, ti, aiter_w)
    out = torch.ops.vllm.moe_forward(x, logits, "model.layers.0.mlp.experts")
    out2 = torch.ops.vllm.outplace_fused_experts(x, w1, w2, tw, ti)
    out3 = torch.ops.vllm.outplace_fused_experts(x, w1d, w2d, torch.ones(T, 1),
                                                 torch.zeros(T, 1, dtype=torch.int32))
    w, i, tei = torch.empty(T, K), torch.empty(T, K, dtype=torch.int32), torch.empty(T, K, dtype=torch.int32)
    torch.ops._moe_C.topk_softmax(w, i, tei, logits.float(), True)
    block = 4
    max_pad = T * K + E * (block - 1)
    sti = torch.empty(max_pad, dtype=torch.int32)
    eids = torch.empty((max_pad + block - 1) // block, dtype=torch.int32)
    ntp = torch.empty(1, dtype=torch.int32)
    torch.ops._moe_C.moe_align_block_size(i, E, block, sti, eids, ntp)
    for o in (out, out2, out3):
        if not torch.isfinite(o.float()).all():
            raise SystemExit("stand-in MoE produced non-finite output")


def _write(prof, path: Path, family: str) -> int:
    return write_profile(prof, path, {"generator": "scripts/capture_serving_fixtures.py",
                                      "family": family, "torch": torch.__version__})


FAMILIES = {"moe": _moe_steps, "kv_cache": _kv_steps, "quant": _quant_steps,
            "inductor": _inductor_steps, "vision": _vision_steps}


def capture(family: str, path: Path) -> int:
    register_ops()
    gen = torch.Generator().manual_seed(1234)
    act = [torch.profiler.ProfilerActivity.CPU]
    with torch.no_grad():
        setup = FAMILIES[family](gen)
        with torch.profiler.profile(activities=act, record_shapes=True) as prof:
            setup()
    return _write(prof, path, family)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(Path(__file__).resolve().parents[1] / "fixtures"))
    ap.add_argument("families", nargs="*", default=list(FAMILIES))
    a = ap.parse_args(argv)
    torch.manual_seed(0)
    for fam in a.families:
        name = f"serving_{fam}.json.gz"
        print(f"{name}: {capture(fam, Path(a.out) / name)} bytes", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
