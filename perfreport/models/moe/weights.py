"""Expert weights of one MoE layer: E, H, I and the bytes per stored value, solved from the
weight tensors (packed 4-bit storage detected against H and I; MXFP4 scales per OCP MX v1.0:
1 E8M0 scale byte per 32 values) or from a model config's format name. The FLOP and byte
formulas that use them: :mod:`perfreport.models.moe.experts`."""

from __future__ import annotations

import msgspec

from perfreport.errors import ModelError
from perfreport.models.args import Tensor
from perfreport.models.dtypes import precision_of

MX_BLOCK = 32  # OCP MX v1.0: values per shared scale
MX_SCALE_BYTES = 1  # E8M0 scale
# weight formats given by a model config / kernel names -> bits per value, scale bytes per value
FORMAT_BITS = {
    "bf16": (16, 0.0),
    "fp16": (16, 0.0),
    "fp32": (32, 0.0),
    "fp8": (8, 0.0),
    "int8": (8, 0.0),
    "mxfp4": (4, MX_SCALE_BYTES / MX_BLOCK),
    "fp4": (4, MX_SCALE_BYTES / MX_BLOCK),
}


class Experts(msgspec.Struct, frozen=True):
    """Expert sizes of one MoE layer."""

    E: int  # experts stored (local)
    H: int  # hidden size the kernels see (may be padded)
    I: int  # expert intermediate size
    gated: bool
    bytes_per_expert: float  # weights (+ scales, biases ...) of one expert, stored bytes
    weight_format: str  # e.g. "bf16", "fp8", "mxfp4 (uint8 storage)"
    source: str  # where the sizes came from


def _dims3(t: Tensor, what: str, op) -> tuple[int, int, int]:
    if len(t.shape) != 3:
        raise ModelError(f"{op.name}: {what} {list(t.shape)} is not [E, *, *]")
    return t.shape


def solve_experts(
    op,
    H: int,
    w1: Tensor,
    w2: Tensor,
    extra_per_expert: float = 0.0,
    fmt_hint: str | None = None,
    source: str = "trace",
) -> Experts:
    """Expert sizes from the two weight tensors, in either orientation ([E,N1,H] or [E,H,N1]).

    Packing p (values per stored element along the reduction dim) is 1, or 2 for packed
    4-bit values (``Float4_e2m1fn_x2``, or uint8/int8 storage whose shapes show K/2). The
    unknowns satisfy w1 = {N1, H/p}, w2 = {H, I/p} with N1 = 2I (gated) or I (ungated).
    """
    E1, a, b = _dims3(w1, "w1", op)
    E2, c, d = _dims3(w2, "w2", op)
    if E1 != E2:
        raise ModelError(f"{op.name}: w1 has {E1} experts, w2 {E2}")
    prec = precision_of(w1.dtype)
    packs = {"fp4": (2,), "uint8": (1, 2), "int8": (1, 2)}.get(prec, (1,))
    if fmt_hint in ("mxfp4", "fp4") and 2 in packs:
        packs = (2,)
    elif fmt_hint in ("fp8", "int8") and 1 in packs:
        packs = (1,)
    fits = []
    for p in packs:
        if H % p:
            continue
        for n1, hk in ((a, b), (b, a)):
            if hk != H // p:
                continue
            for h2, ik in ((c, d), (d, c)):
                if h2 != H:
                    continue
                inter = ik * p
                if n1 in (2 * inter, inter):
                    fits.append((p, inter, n1 == 2 * inter))
    fits = sorted(set(fits))
    if not fits:
        raise ModelError(
            f"{op.name}: expert weights {list(w1.shape)}, {list(w2.shape)} ({w1.dtype}) do not match hidden size {H}"
        )
    if len({(p, i) for p, i, _ in fits}) > 1:
        raise ModelError(
            f"{op.name}: expert weights {list(w1.shape)}, {list(w2.shape)} "
            f"({w1.dtype}) are ambiguous (packed 4-bit or 8-bit?): give "
            "--model-config with quantization_config"
        )
    p, inter, gated = fits[0]
    per_expert = (w1.nbytes + w2.nbytes) / E1 + extra_per_expert
    fmt = prec
    if p == 2:
        fmt = "mxfp4" if prec == "fp4" else f"mxfp4 ({prec} storage)"
        if extra_per_expert == 0.0:  # scales not visible: MX scale bytes, OCP MX v1.0
            per_expert += (H * (2 * inter if gated else inter) + inter * H) * MX_SCALE_BYTES / MX_BLOCK
    elif prec in ("uint8", "int8") and fmt_hint == "fp8":
        fmt = f"fp8 ({prec} storage)"
    return Experts(E1, H, inter, gated, per_expert, fmt, source)


def experts_from_config(op, H: int, cfg: dict, tp: int = 1) -> Experts:
    """Expert sizes from the ``moe_config`` perf_meta (copied from ``--model-config``): the
    config's global intermediate size, ``/ tp`` on a rank of a tensor-parallel run (its
    experts are sharded by TP: vLLM's ``FusedMoE`` without expert parallelism)."""
    E, inter = cfg.get("num_experts"), cfg.get("intermediate_size")
    fmt = cfg.get("weight_format") or ""
    if not E or not inter:
        raise ModelError(
            f"{op.name}: no expert weights in the trace and the model config lacks num_experts / moe_intermediate_size"
        )
    if inter % tp:
        raise ModelError(f"{op.name}: expert intermediate size {inter} does not split over tensor parallelism {tp}")
    inter //= tp
    if fmt not in FORMAT_BITS:
        raise ModelError(f"{op.name}: expert weight format {fmt!r} unknown (known: {', '.join(sorted(FORMAT_BITS))})")
    bits, scale = FORMAT_BITS[fmt]
    values = H * 2 * inter + inter * H  # gated experts (every MoE config family we read)
    return Experts(E, H, inter, True, values * (bits / 8 + scale), fmt, "model config")


__all__ = ["FORMAT_BITS", "MX_BLOCK", "MX_SCALE_BYTES", "Experts", "experts_from_config", "solve_experts"]
