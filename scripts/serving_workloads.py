"""The profiled workloads of the serving fixtures: inputs made outside the profiled region, then
the calls of the stand-in ops (scripts/serving_*_ops.py) under their real names.

``FAMILIES[family](gen)`` builds one family's inputs from the seeded generator ``gen`` and
returns the zero-argument function the capture profiles (scripts/capture_serving_fixtures.py).
"""

from __future__ import annotations

import torch

import serving_kv_cache_ops
import serving_moe_ops
import serving_quant_ops
import serving_vision_ops
from serving_moe_ops import E, H, I, K, T
from serving_quant_ops import FP8_MAX


def register_ops() -> None:
    """Register every stand-in op (stand_in_library skips those already registered)."""
    for family in (serving_moe_ops, serving_kv_cache_ops, serving_quant_ops, serving_vision_ops):
        family.register()


# ---- MoE: vLLM, aiter, CUTLASS ----------------------------------------------------------------
def _moe_steps(gen):
    """Weights and inputs made outside the profiled region; returns the profiled steps."""
    packed = lambda *s: torch.randint(0, 256, s, generator=gen, dtype=torch.uint8)
    scale = lambda *s: torch.randint(120, 128, s, generator=gen, dtype=torch.uint8)
    w13, w2 = packed(E, H // 2, 2 * I), packed(E, I // 2, H)
    dq = serving_moe_ops.dequant_mxfp4
    serving_moe_ops.LAYERS["model.layers.0.mlp.experts"] = dict(
        w13=w13,
        w2=w2,
        w13_flat=dq(w13, scale(E, H // 32, 2 * I)).transpose(1, 2).reshape(-1, H),
        w2_flat=dq(w2, scale(E, I // 32, H)).transpose(1, 2).reshape(-1, I),
    )
    bf = lambda *s: (torch.randn(*s, generator=gen) * 0.1).to(torch.bfloat16)
    x, logits = bf(T, H), bf(T, E)
    w1, w2, w1d, w2d = bf(E, 2 * I, H), bf(E, H, I), bf(1, 2 * I, H), bf(1, H, I)
    tw = torch.softmax(torch.randn(T, K, generator=gen), -1)
    ti = torch.stack([torch.randperm(E, generator=gen)[:K] for _ in range(T)]).to(torch.int32)
    fp8 = torch.float8_e4m3fnuz
    aiter_w = dict(
        gate=w1.float().to(fp8),
        down=w2.float().to(fp8),
        x=x.float().to(fp8),
        x_scale=torch.ones(T, 1),
        fc1_scale=torch.ones(E, 2 * I, 1),
        fc2_scale=torch.ones(E, H, 1),
    )
    order = torch.argsort(ti.reshape(-1).long(), stable=True)
    counts = torch.bincount(ti.reshape(-1).long(), minlength=E)
    cut = dict(
        a=x.float()[order // K].to(torch.float8_e4m3fn),
        b=w1.float().to(torch.float8_e4m3fn).transpose(1, 2),  # [E, H, 2I] view
        offsets=(torch.cumsum(counts, 0) - counts).to(torch.int32),
        sizes=torch.stack([counts, torch.full((E,), 2 * I), torch.full((E,), H)], 1).to(torch.int32),
    )
    aiter_w["cutlass"] = cut
    return lambda: _moe_run(x, logits, w1, w2, w1d, w2d, tw, ti, aiter_w)


def _aiter_run(x, w1, w2, tw, ti, a) -> None:
    sid, seid, nvalid = serving_moe_ops.sorted_routing(ti, 4)
    sw = tw.reshape(-1)
    out = torch.empty(T, H, dtype=torch.bfloat16)
    torch.ops.aiter.fmoe_g1u1(
        out, a["x"], a["gate"], a["down"], sid, sw, seid, nvalid, K, a["x_scale"], a["fc1_scale"], a["fc2_scale"]
    )
    inter = torch.empty(T, K, I, dtype=torch.bfloat16)
    torch.ops.aiter.ck_moe_stage1(x, w1, w2, sid, seid, nvalid, inter, K, "", None, None, 4, None)
    out2 = torch.empty(T, H, dtype=torch.bfloat16)
    torch.ops.aiter.ck_moe_stage2(inter, w1, w2, sid, seid, nvalid, out2, K, "", None, None, 4, sw)
    c = a["cutlass"]
    out3 = torch.empty(T * K, 2 * I, dtype=torch.bfloat16)
    strides = lambda v: torch.full((E,), v, dtype=torch.int64)
    torch.ops._C.cutlass_moe_mm(
        out3,
        c["a"],
        c["b"],
        torch.ones(1),
        torch.ones(E, 1, 1),
        c["offsets"],
        c["sizes"],
        strides(H),
        strides(H),
        strides(2 * I),
        False,
        False,
    )
    for o in (out, out2, out3):
        if not torch.isfinite(o.float()).all():
            raise SystemExit("stand-in aiter MoE produced non-finite output")


def _moe_run(x, logits, w1, w2, w1d, w2d, tw, ti, aiter_w) -> None:
    _aiter_run(x, w1, w2, tw, ti, aiter_w)
    out = torch.ops.vllm.moe_forward(x, logits, "model.layers.0.mlp.experts")
    out2 = torch.ops.vllm.outplace_fused_experts(x, w1, w2, tw, ti)
    out3 = torch.ops.vllm.outplace_fused_experts(x, w1d, w2d, torch.ones(T, 1), torch.zeros(T, 1, dtype=torch.int32))
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


# ---- KV-cache writes --------------------------------------------------------------------------
KV_T, KV_H, KV_D, PAGE, BLOCKS, MLA_L, MLA_R = 5, 2, 16, 4, 6, 32, 8


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
        torch.ops.sglang.store_cache(
            key.view(KV_T, -1),
            value.view(KV_T, -1),
            *sg,
            slots,
            row_bytes=KV_H * KV_D * 2,
            num_split=0,
            size_limit=BLOCKS * PAGE,
        )

    return run


# ---- activation quantization ------------------------------------------------------------------
Q_T, Q_H, Q_GROUP = 8, 64, 32


def _quant_steps(gen):
    x = torch.randn(Q_T, Q_H, generator=gen).to(torch.bfloat16)
    out = lambda: torch.empty(Q_T, Q_H, dtype=torch.float8_e4m3fn)

    def run():
        torch.ops._C.static_scaled_fp8_quant(out(), x, torch.tensor([0.01]))
        torch.ops._C.dynamic_scaled_fp8_quant(out(), x, torch.empty(1))
        torch.ops._C.dynamic_per_token_scaled_fp8_quant(out(), x, torch.empty(Q_T, 1), None)
        torch.ops._C.per_token_group_fp8_quant(
            x, out(), torch.empty(Q_T, Q_H // Q_GROUP), Q_GROUP, 1e-10, -FP8_MAX, FP8_MAX, False
        )

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


# ---- pooling / resampling / norms -------------------------------------------------------------
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
        torch.ops.aten.miopen_batch_norm_backward(x, torch.ones_like(x), torch.ones(4), None, None, mean, invstd, 1e-5)
        y2 = torch.empty_like(gn_in)
        torch.ops.aiter._groupnorm_run(y2, torch.empty(64), gn_in, 2, gw, gb, 1e-5)

    return run


FAMILIES = {
    "moe": _moe_steps,
    "kv_cache": _kv_steps,
    "quant": _quant_steps,
    "inductor": _inductor_steps,
    "vision": _vision_steps,
}
