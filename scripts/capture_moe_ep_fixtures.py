"""Capture the expert-parallel MoE fixture trace (CPU, a real torch.profiler run).

    . .venv/bin/activate && python scripts/capture_moe_ep_fixtures.py [--out fixtures]

One rank of an EP-4 layer: the router picks among E_G = 8 experts, this rank holds the
E_L = 2 experts 2 and 3. Stand-in custom ops registered with torch.library under the exact
names and positional signatures compute small real results in torch (other ranks' picks
contribute nothing, as the real kernels skip them), run under
``torch.profiler.profile(activities=[CPU], record_shapes=True)``:

* ``vllm::moe_forward(hidden_states[T,H], router_logits[T,E_G], layer_name)``: the routing
  ``TopK`` / ``SortTokens`` children over all E_G experts (the triton_kernels autograd
  Functions of scripts/serving_routing_ops.py) and views of the local BF16 expert
  weights ``[E_L, 2I, H]`` / ``[E_L, H, I]``;
* ``vllm::outplace_fused_experts(hidden_states, w1, w2, topk_weights, topk_ids, activation,
  apply_router_weight_on_input, use_fp8_w8a8, use_int8_w8a8, use_int8_w8a16,
  use_int4_w4a16, per_channel_quant, global_num_experts, expert_map, w1_scale, w2_scale,
  w1_zp, w2_zp, a1_scale, a2_scale, block_shape)`` (vLLM ``fused_moe.py``), once with
  ``global_num_experts = 8`` and ``expert_map`` ([E_G] int32: global id -> local id or -1),
  once without (``-1``, ``None``: the global count then comes only from ``--model-config``);
* ``aiter::fused_moe_(hidden_states, w1, w2, topk_weight, topk_ids, expert_mask, activation,
  quant_type, doweight_stage1, w1_scale, w2_scale, a1_scale, a2_scale, block_size_M,
  num_local_tokens, moe_sorting_dispatch_policy, dtype, hidden_pad, intermediate_pad, bias1,
  bias2)`` (ROCm/aiter ``aiter/fused_moe.py``) with ``expert_mask`` ([E_G] int32, 1 = local).

Sizes (module constants): T 6 tokens, H 64, I 96, k 2. Seeded: shapes and dtypes are the same
on every run (only timestamps differ).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from fixture_io import write_profile  # scripts/ is on sys.path when a script runs
from serving_routing_ops import Bitmatrix, SortTokens, TopK
from stand_in_library import define

import torch

T, H, I, K, E_G, E_L, FIRST = 6, 64, 96, 2, 8, 2, 2  # local experts FIRST .. FIRST+E_L-1
_LAYERS: dict = {}


def _local_moe(x, w1, w2, topk_w, topk_ids, local_of):
    """out[t] = Σ over t's local picks j of w_tj · W2(e) · silu(gate) · up, e = local_of(id)."""
    out = torch.zeros(x.shape[0], x.shape[1], dtype=torch.float32)
    for t in range(x.shape[0]):
        for j in range(topk_ids.shape[1]):
            e = local_of(int(topk_ids[t, j]))
            if e < 0:
                continue  # another rank's expert: skipped
            g, u = torch.mm(x[t : t + 1].float(), w1[e].float().t()).chunk(2, dim=-1)
            y = torch.mm(torch.nn.functional.silu(g) * u, w2[e].float().t())
            out[t] += float(topk_w[t, j]) * y[0]
    return out.to(x.dtype)


def _by_range(g: int) -> int:
    return g - FIRST if FIRST <= g < FIRST + E_L else -1


def moe_forward(hidden_states, router_logits, layer_name):
    layer = _LAYERS[layer_name]
    vals, idx, bits = TopK.apply(router_logits, K, True, 1, True, None, None)
    SortTokens.apply(vals, idx, router_logits.shape[1], Bitmatrix(bits))
    w13, w2 = layer["w13"].view(E_L, 2 * I, H), layer["w2"].view(E_L, H, I)
    return _local_moe(hidden_states, w13, w2, vals.float(), idx.long(), _by_range)


def outplace_fused_experts(
    hidden_states,
    w1,
    w2,
    topk_weights,
    topk_ids,
    activation,
    apply_router_weight_on_input,
    use_fp8_w8a8,
    use_int8_w8a8,
    use_int8_w8a16,
    use_int4_w4a16,
    per_channel_quant,
    global_num_experts,
    expert_map,
    w1_scale,
    w2_scale,
    w1_zp,
    w2_zp,
    a1_scale,
    a2_scale,
    block_shape,
):
    local = (lambda g: int(expert_map[g])) if expert_map is not None else _by_range
    return _local_moe(hidden_states, w1, w2, topk_weights, topk_ids, local)


def fused_moe_(
    hidden_states,
    w1,
    w2,
    topk_weight,
    topk_ids,
    expert_mask,
    activation,
    quant_type,
    doweight_stage1,
    w1_scale,
    w2_scale,
    a1_scale,
    a2_scale,
    block_size_M,
    num_local_tokens,
    moe_sorting_dispatch_policy,
    dtype,
    hidden_pad,
    intermediate_pad,
    bias1,
    bias2,
):
    hash_ = torch.cumsum(expert_mask, 0) - 1  # global id -> local id
    local = lambda g: int(hash_[g]) if int(expert_mask[g]) else -1
    return _local_moe(hidden_states, w1, w2, topk_weight, topk_ids, local)


def register_ops() -> None:
    define("vllm", "moe_forward(Tensor hidden_states, Tensor router_logits, str layer_name) -> Tensor", moe_forward)
    define(
        "vllm",
        "outplace_fused_experts(Tensor hidden_states, Tensor w1, Tensor w2, "
        "Tensor topk_weights, Tensor topk_ids, str activation, "
        "bool apply_router_weight_on_input, bool use_fp8_w8a8, bool use_int8_w8a8, "
        "bool use_int8_w8a16, bool use_int4_w4a16, bool per_channel_quant, "
        "int global_num_experts, Tensor? expert_map, Tensor? w1_scale, Tensor? w2_scale, "
        "Tensor? w1_zp, Tensor? w2_zp, Tensor? a1_scale, Tensor? a2_scale, "
        "int[]? block_shape) -> Tensor",
        outplace_fused_experts,
    )
    define(
        "aiter",
        "fused_moe_(Tensor hidden_states, Tensor w1, Tensor w2, Tensor topk_weight, "
        "Tensor topk_ids, Tensor? expert_mask, int activation, int quant_type, "
        "bool doweight_stage1, Tensor? w1_scale, Tensor? w2_scale, Tensor? a1_scale, "
        "Tensor? a2_scale, int block_size_M, Tensor? num_local_tokens, "
        "int moe_sorting_dispatch_policy, ScalarType? dtype, int hidden_pad, "
        "int intermediate_pad, Tensor? bias1, Tensor? bias2) -> Tensor",
        fused_moe_,
    )


def _steps(gen):
    bf = lambda *s: (torch.randn(*s, generator=gen) * 0.1).to(torch.bfloat16)
    x, logits = bf(T, H), bf(T, E_G)
    w1, w2 = bf(E_L, 2 * I, H), bf(E_L, H, I)
    _LAYERS["model.layers.0.mlp.experts"] = dict(w13=w1, w2=w2)
    tw = torch.softmax(torch.randn(T, K, generator=gen), -1)
    ti = torch.stack([torch.randperm(E_G, generator=gen)[:K] for _ in range(T)]).to(torch.int32)
    emap = torch.full((E_G,), -1, dtype=torch.int32)
    emap[FIRST : FIRST + E_L] = torch.arange(E_L, dtype=torch.int32)
    mask = (emap >= 0).to(torch.int32)

    def run():
        outs = [torch.ops.vllm.moe_forward(x, logits, "model.layers.0.mlp.experts")]
        flags = ("silu", False, False, False, False, False, False)
        tail = (None,) * 6 + (None,)
        outs.append(torch.ops.vllm.outplace_fused_experts(x, w1, w2, tw, ti, *flags, E_G, emap, *tail))
        outs.append(torch.ops.vllm.outplace_fused_experts(x, w1, w2, tw, ti, *flags, -1, None, *tail))
        outs.append(
            torch.ops.aiter.fused_moe_(
                x, w1, w2, tw, ti, mask, 0, 0, False, None, None, None, None, -1, None, 0, None, 0, 0, None, None
            )
        )
        if any(not torch.isfinite(o.float()).all() for o in outs):
            raise SystemExit("stand-in EP MoE produced non-finite output")

    return run


def capture(path: Path) -> int:
    register_ops()
    gen = torch.Generator().manual_seed(4321)
    with torch.no_grad():
        run = _steps(gen)
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU], record_shapes=True) as prof:
            run()
    return write_profile(
        prof, path, {"generator": "scripts/capture_moe_ep_fixtures.py", "family": "moe_ep", "torch": torch.__version__}
    )


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(Path(__file__).resolve().parents[1] / "fixtures"))
    a = ap.parse_args(argv)
    torch.manual_seed(0)
    path = Path(a.out) / "serving_moe_ep.json.gz"
    print(f"{path.name}: {capture(path)} bytes", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
