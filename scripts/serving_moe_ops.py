"""Stand-in MoE serving ops (vLLM, aiter, CUTLASS), registered under their real names.

Each computes a small real result in torch with the real positional signature:
``vllm::moe_forward`` (MXFP4 layer looked up by name in ``LAYERS``, routing through the
triton_kernels stand-ins of scripts/serving_routing_ops.py), ``vllm::outplace_fused_experts``,
``_moe_C::topk_softmax``, ``_moe_C::moe_align_block_size``, ``aiter::fmoe_g1u1``,
``aiter::ck_moe_stage1`` / ``ck_moe_stage2`` and ``_C::cutlass_moe_mm``.

MoE sizes: T 6 tokens, H 64, I 96, E 8, k 2 (2I != H, so the packed uint8 shapes cannot
also be read as 8-bit weights).
"""

from __future__ import annotations

import torch

from serving_routing_ops import Bitmatrix, SortTokens, TopK
from stand_in_library import define

T, H, I, E, K = 6, 64, 96, 8, 2
# layer name -> {"w13", "w2": packed MXFP4 uint8; "w13_flat", "w2_flat": dequantized, 2-d},
# filled by the workload before the profiled run (vLLM looks its layer up by name the same way)
LAYERS: dict = {}
# FP4 E2M1 code points (OCP MX v1.0 §5.3.3): sign bit, 2 exponent bits, 1 mantissa bit
_FP4 = torch.tensor([0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, -0.0, -0.5, -1.0, -1.5, -2.0, -3.0, -4.0, -6.0])


def dequant_mxfp4(packed: torch.Tensor, scales: torch.Tensor) -> torch.Tensor:
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
            h = torch.mm(x[t : t + 1].float(), w1(e).float().t())
            g, u = h.chunk(2, dim=-1)
            y = torch.mm(torch.nn.functional.silu(g) * u, w2(e).float().t())
            out[t] += float(topk_w[t, j]) * y[0]
    return out.to(x.dtype)


def moe_forward(hidden_states, router_logits, layer_name):
    layer = LAYERS[layer_name]
    vals, idx, bits = TopK.apply(router_logits, K, True, 1, True, None, None)
    SortTokens.apply(vals, idx, router_logits.shape[1], Bitmatrix(bits))
    layer["w13"].view(E, H // 2, 2 * I)  # the packed weights handed to the kernels,
    layer["w2"].view(E, I // 2, H)  # viewed as in the real capture
    w1f, w2f = layer["w13_flat"], layer["w2_flat"]  # dequantized at load time, 2-d
    return _expert_mlp(
        hidden_states,
        lambda e: w1f[e * 2 * I : (e + 1) * 2 * I],
        lambda e: w2f[e * H : (e + 1) * H],
        vals.float(),
        idx.long(),
    )


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


def moe_align_block_size(topk_ids, num_experts, block_size, sorted_token_ids, experts_ids, num_tokens_post_pad):
    flat = topk_ids.reshape(-1).long()
    sorted_token_ids.fill_(flat.numel())
    pos = 0
    for e in range(num_experts):
        hits = torch.nonzero(flat == e).reshape(-1)
        n = (hits.numel() + block_size - 1) // block_size * block_size
        sorted_token_ids[pos : pos + hits.numel()] = hits.to(sorted_token_ids.dtype)
        experts_ids[pos // block_size : (pos + n) // block_size] = e
        pos += n
    num_tokens_post_pad.fill_(pos)


def sorted_routing(topk_ids, block):
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
    return (
        torch.tensor(ids, dtype=torch.int32),
        torch.tensor(experts, dtype=torch.int32),
        torch.tensor([len(ids)], dtype=torch.int32),
    )


def _by_block(sorted_ids, sorted_experts, n_tokens, k, fn):
    block = sorted_ids.numel() // sorted_experts.numel()
    for b, e in enumerate(sorted_experts.tolist()):
        for i in sorted_ids[b * block : (b + 1) * block].tolist():
            if i < n_tokens * k:
                fn(e, *divmod(i, k))


def fmoe_g1u1(
    out,
    input,
    gate,
    down,
    sorted_token_ids,
    sorted_weights,
    sorted_expert_ids,
    num_valid_ids,
    topk,
    input_scale,
    fc1_scale,
    fc2_scale,
):
    acc = torch.zeros(out.shape, dtype=torch.float32)

    def one(e, t, j):
        x = input[t].float() * input_scale[t]
        h = gate[e].float() * fc1_scale[e] @ x
        g, u = h.chunk(2)
        acc[t] += float(sorted_weights[t * topk + j]) * (
            down[e].float() * fc2_scale[e] @ (torch.nn.functional.silu(g) * u)
        )

    _by_block(sorted_token_ids, sorted_expert_ids, input.shape[0], topk, one)
    out.copy_(acc)


def ck_moe_stage1(
    hidden_states,
    w1,
    w2,
    sorted_token_ids,
    sorted_expert_ids,
    num_valid_ids,
    out,
    topk,
    kernelName,
    w1_scale,
    a1_scale,
    block_m,
    sorted_weights,
):
    def one(e, t, j):
        g, u = (w1[e].float() @ hidden_states[t].float()).chunk(2)
        out[t, j] = (torch.nn.functional.silu(g) * u).to(out.dtype)

    _by_block(sorted_token_ids, sorted_expert_ids, hidden_states.shape[0], topk, one)


def ck_moe_stage2(
    inter_states,
    w1,
    w2,
    sorted_token_ids,
    sorted_expert_ids,
    num_valid_ids,
    out,
    topk,
    kernelName,
    w2_scale,
    a2_scale,
    block_m,
    sorted_weights,
):
    acc = torch.zeros(out.shape, dtype=torch.float32)

    def one(e, t, j):
        acc[t] += float(sorted_weights[t * topk + j]) * (w2[e].float() @ inter_states[t, j].float())

    _by_block(sorted_token_ids, sorted_expert_ids, inter_states.shape[0], topk, one)
    out.copy_(acc.to(out.dtype))


def cutlass_moe_mm(
    out_tensors,
    a_tensors,
    b_tensors,
    a_scales,
    b_scales,
    expert_offsets,
    problem_sizes,
    a_strides,
    b_strides,
    c_strides,
    per_act_token,
    per_out_ch,
):
    offs = expert_offsets.tolist() + [a_tensors.shape[0]]
    for e in range(b_tensors.shape[0]):
        lo, hi = offs[e], offs[e + 1]
        if hi > lo:
            a = a_tensors[lo:hi].float() * a_scales
            out_tensors[lo:hi] = (a @ (b_tensors[e].float() * b_scales[e])).to(out_tensors.dtype)


def register() -> None:
    define("vllm", "moe_forward(Tensor hidden_states, Tensor router_logits, str layer_name) -> Tensor", moe_forward)
    define(
        "vllm",
        "outplace_fused_experts(Tensor hidden_states, Tensor w1, Tensor w2, "
        "Tensor topk_weights, Tensor topk_ids) -> Tensor",
        outplace_fused_experts,
    )
    define(
        "_moe_C",
        "topk_softmax(Tensor(a!) topk_weights, Tensor(b!) topk_indices, "
        "Tensor(c!) token_expert_indices, Tensor gating_output, bool renormalize) -> ()",
        topk_softmax,
    )
    define(
        "_moe_C",
        "moe_align_block_size(Tensor topk_ids, int num_experts, int block_size, "
        "Tensor(a!) sorted_token_ids, Tensor(b!) experts_ids, "
        "Tensor(c!) num_tokens_post_pad) -> ()",
        moe_align_block_size,
    )
    define(
        "aiter",
        "fmoe_g1u1(Tensor(a!) out, Tensor input, Tensor gate, Tensor down, "
        "Tensor sorted_token_ids, Tensor sorted_weights, Tensor sorted_expert_ids, "
        "Tensor num_valid_ids, int topk, Tensor input_scale, Tensor fc1_scale, "
        "Tensor fc2_scale) -> ()",
        fmoe_g1u1,
    )
    stage = (
        "Tensor sorted_token_ids, Tensor sorted_expert_ids, Tensor num_valid_ids, "
        "Tensor(a!) out, int topk, str kernelName, Tensor? {s}_scale, Tensor? {a}_scale, "
        "int block_m, Tensor? sorted_weights) -> ()"
    )
    define(
        "aiter",
        "ck_moe_stage1(Tensor hidden_states, Tensor w1, Tensor w2, " + stage.format(s="w1", a="a1"),
        ck_moe_stage1,
    )
    define(
        "aiter",
        "ck_moe_stage2(Tensor inter_states, Tensor w1, Tensor w2, " + stage.format(s="w2", a="a2"),
        ck_moe_stage2,
    )
    define(
        "_C",
        "cutlass_moe_mm(Tensor(a!) out_tensors, Tensor a_tensors, Tensor b_tensors, "
        "Tensor a_scales, Tensor b_scales, Tensor expert_offsets, Tensor problem_sizes, "
        "Tensor a_strides, Tensor b_strides, Tensor c_strides, bool per_act_token, "
        "bool per_out_ch) -> ()",
        cutlass_moe_mm,
    )
