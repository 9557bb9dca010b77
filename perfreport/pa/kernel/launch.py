"""Launch of the paged-attention kernels, and their ahead-of-time compile for a GPU target.

``launch`` takes the argument dict and constexpr dict built by the host wrapper
(:mod:`perfreport.pa.kernel.host`). ``aot_compile`` builds the same kernels for a
target without a GPU (``"sm_90a"``, ``"gfx942"``, ``"gfx950"``) so tests can read the compiled
code (PTX / amdgcn) and its register and shared-memory use.
"""

from __future__ import annotations

import triton

from perfreport.pa.kernel import partition_kernel as K
from perfreport.pa.kernel import reduce_kernel as R

P_CHUNK = 16  # partitions per load in the reduce
REDUCE_WARPS = 2  # 64 threads per query row of Dv <= 256 values


def split_dim(d: int) -> tuple[int, int]:
    """D = A + B: A the largest power of two <= D, B the rest rounded up to a power of two (or 0)."""
    a = 1 << (d.bit_length() - 1)
    rest = d - a
    return a, (triton.next_power_of_2(rest) if rest else 0)


def default_warps(block_m: int, hip: bool) -> int:
    """4 warps everywhere (one warpgroup per 64-row tile on Hopper, wave64 on AMD): with 8 the
    sm_90a build needs 154 registers x 256 threads, one CTA per SM; with 4, two CTAs fit."""
    return 4


def launch(grid_main, grid_reduce, args: dict, cfg: dict, num_warps: int, num_stages: int) -> None:
    """Launch the partition kernel (and the reduce kernel unless ``cfg['DIRECT']``)."""
    K._pa_decode_partition[grid_main](
        *_main_args(args), num_warps=num_warps, num_stages=num_stages, **_main_consts(cfg)
    )
    if not cfg["DIRECT"]:
        R._pa_decode_reduce[grid_reduce](
            args["out"],
            args["m"],
            args["l"],
            args["acc"],
            args["ctx"],
            *args["o_strides"],
            args["num_kv"],
            args["max_pages"],
            args["num_parts"],
            num_warps=REDUCE_WARPS,
            **_reduce_consts(cfg),
        )


def _main_args(args: dict) -> list:
    return [
        args["q"],
        args["k"],
        args["v"],
        args["bt"],
        args["ctx"],
        args["ks"],
        args["vs"],
        args["out"],
        args["m"],
        args["l"],
        args["acc"],
        args["qk_scale"],
        args["v_mult"],
        *args["q_strides"],
        *args["o_strides"],
        args["stride_bt"],
        *args["k_strides"],
        *args["v_strides"],
        *args["ks_strides"],
        *args["vs_strides"],
        args["max_pages"],
        args["num_parts"],
    ]


def warmup(args: dict, cfg: dict, num_warps: int, num_stages: int):
    """Compile (or fetch from triton's cache) the partition kernel for these arguments without
    launching it; returns triton's compiled kernel (its ``asm`` holds the cubin / amdgcn). A
    tensor argument may be given as its torch dtype (triton's ``MockTensor``)."""
    return K._pa_decode_partition.warmup(
        *_main_args(args), grid=(1,), num_warps=num_warps, num_stages=num_stages, **_main_consts(cfg)
    )


def _main_consts(cfg: dict) -> dict:
    names = (
        "Q_LEN",
        "GROUP",
        "BLOCK_M",
        "DK",
        "DKA",
        "DKB",
        "DV",
        "DVA",
        "DVB",
        "PAGE",
        "BLOCK_N",
        "X",
        "K_5D",
        "V_LAYOUT",
        "VX",
        "K_SCALE",
        "V_SCALE",
        "MMA",
        "FP8_MAX",
        "DIRECT",
        "PART_BF16",
        "DOT_F32",
    )
    return {n: cfg[n] for n in names}


def _reduce_consts(cfg: dict) -> dict:
    return dict(
        Q_LEN=cfg["Q_LEN"],
        GROUP=cfg["GROUP"],
        DV=cfg["DV"],
        DV_BLOCK=triton.next_power_of_2(cfg["DV"]),
        PAGE=cfg["PAGE"],
        P_CHUNK=P_CHUNK,
        PART_BF16=cfg["PART_BF16"],
    )


def make_cfg(
    *,
    q_len: int,
    group: int,
    dk: int,
    dv: int,
    page: int,
    k_5d: bool,
    v_layout: int,
    x: int,
    kv: str,
    k_scale: int,
    v_scale: int,
    mma: str,
    direct: bool,
    part_bf16: bool,
    fp8_max: float,
    dot_f32: bool,
    block_n: int | None = None,
) -> dict:
    """The kernels' constexprs. ``kv`` "bf16"/"fp8"; ``mma`` "bf16", "f16" or "fp8"."""
    if block_n is None:
        from perfreport.pa.kernel.configs import FALLBACK

        block_n = FALLBACK[mma][0]
    rows = q_len * group
    dka, dkb = split_dim(dk)
    dva, dvb = split_dim(dv)
    return dict(
        Q_LEN=q_len,
        GROUP=group,
        BLOCK_M=max(16, 1 << (rows - 1).bit_length()),
        DK=dk,
        DKA=dka,
        DKB=dkb,
        DV=dv,
        DVA=dva,
        DVB=dvb,
        PAGE=page,
        BLOCK_N=block_n,
        X=x if k_5d else 1,
        K_5D=k_5d,
        V_LAYOUT=v_layout,
        VX=x if v_layout == 2 else 1,
        K_SCALE=k_scale,
        V_SCALE=v_scale,
        MMA={"bf16": 0, "f16": 1, "fp8": 2}[mma],
        FP8_MAX=float(fp8_max),
        DIRECT=direct,
        PART_BF16=part_bf16,
        DOT_F32=dot_f32,
    )


def _divisible(stride: str, k_mode: int, v_mode: int, v5: bool, fp8: bool) -> bool:
    """Whether a stride argument is a multiple of 16 at the AOT shapes (as the JIT would see it)."""
    if stride in ("stride_ksb", "stride_ksh"):
        return k_mode == 3  # per-token [blocks, H_KV, page]; per-head [H_KV] has stride 1
    if stride in ("stride_vsb", "stride_vsh"):
        return v_mode == 3
    if stride == "stride_vd" and v5:
        return fp8  # the vectorized V's dim stride is x: 16 (FP8) or 8 (BF16); unused by the kernel
    return True


def aot_compile(
    target: str,
    *,
    kv: str = "bf16",
    dk: int = 192,
    dv: int = 128,
    q_len: int = 4,
    group: int = 16,
    page: int = 64,
    layout: str = "NHD",
    v5: bool = False,
    parts: int = 2,
    num_warps: int | None = None,
    num_stages: int | None = None,
    fp8_mma: str = "f16",
    scales: str = "tensor",
    part_bf16: bool = False,
    block_n: int | None = None,
    v_scales: str | None = None,
):
    """Compile both kernels for ``target`` without a GPU; returns (partition, reduce) compiled kernels.

    ``kv``: "bf16", "fp8" (e4m3fn) or "fp8_fnuz"; ``layout`` "NHD" or "5D" (``v5``: vectorized 5D
    V); ``scales``: "tensor", "head" or "token" for FP8 (K's; ``v_scales`` V's, default the same). Uses the constexprs and the stride
    divisibility hints the JIT would use at these shapes. ``.asm`` holds ptx/cubin or amdgcn.
    """
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    hip = target.startswith("gfx")
    tgt = GPUTarget("hip", target, 64) if hip else GPUTarget("cuda", int(target[3:5]), 32)
    kv_ty = {"bf16": "*bf16", "fp8": "*fp8e4nv", "fp8_fnuz": "*fp8e4b8"}[kv]
    fp8 = kv != "bf16"
    five = layout.upper() == "5D"
    from perfreport.pa.kernel.configs import default_config

    d_block_n, d_stages = default_config(target, "fp8" if fp8 else "bf16", fp8_mma if fp8 else "bf16")
    block_n = block_n or d_block_n
    num_stages = num_stages or d_stages
    modes = {"tensor": 1, "head": 2, "token": 3}
    mode = modes[scales] if fp8 else 0
    v_mode = modes[v_scales or scales] if fp8 else 0
    cfg = make_cfg(
        q_len=q_len,
        group=group,
        dk=dk,
        dv=dv,
        page=page,
        k_5d=five,
        v_layout=(2 if v5 else 1) if five else 0,
        x=16 if fp8 else 8,
        kv="fp8" if fp8 else "bf16",
        k_scale=mode,
        v_scale=v_mode,
        mma=fp8_mma if fp8 else "bf16",
        direct=parts == 1,
        part_bf16=part_bf16,
        fp8_max=240.0 if kv == "fp8_fnuz" else 448.0,
        dot_f32=False,
        block_n=block_n,
    )
    consts = dict(_main_consts(cfg), **_reduce_consts(cfg))
    ptr_types = dict(
        q_ptr="*bf16",
        k_ptr=kv_ty,
        v_ptr=kv_ty,
        bt_ptr="*i32",
        ctx_ptr="*i32",
        ks_ptr="*fp32",
        vs_ptr="*fp32",
        out_ptr="*bf16",
        m_ptr="*fp32",
        l_ptr="*fp32",
        acc_ptr="*bf16" if part_bf16 else "*fp32",
        qk_scale="fp32",
        v_mult="fp32",
    )
    warps = num_warps or default_warps(cfg["BLOCK_M"], hip)
    out = []
    for fn in (K._pa_decode_partition, R._pa_decode_reduce):
        names = fn.arg_names
        c = {k: v for k, v in consts.items() if k in names}
        sig = {n: "constexpr" if n in c else ptr_types.get(n, "i32") for n in names}
        attrs = {
            (i,): [["tt.divisibility", 16]]
            for i, n in enumerate(names)
            if sig[n].startswith("*") or (n.startswith("stride") and _divisible(n, mode, v_mode, v5, fp8))
        }
        main = fn is K._pa_decode_partition
        opts = dict(num_warps=warps if main else REDUCE_WARPS, num_stages=num_stages if main else 2)
        out.append(triton.compile(ASTSource(fn, sig, c, attrs), target=tgt, options=opts))
    return tuple(out)


__all__ = ["P_CHUNK", "REDUCE_WARPS", "aot_compile", "default_warps", "launch", "make_cfg", "split_dim", "warmup"]
