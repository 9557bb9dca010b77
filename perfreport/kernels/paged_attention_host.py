"""Host wrapper for the Triton paged-attention decode kernel: validation, partitioning, launch.

Validation happens before any launch and raises ``ValueError`` with a one-line message. It never
reads device memory (no host sync): checks on the *values* of ``context_lens`` (each >= 1, the
block table wide enough) run when ``context_lens`` is a CPU tensor, or against the host-side
``max_context`` bound when the caller gives one. On device tensors without ``max_context`` the
values are not checked; the kernel then stays memory-safe anyway (it never reads past the block
table's width, and a sequence with no visible key yields zeros).

Workspaces: with more than one partition the kernel writes fp32 partials. Pass a
:class:`PAWorkspace` (see :func:`make_workspace`) and an ``out`` tensor to make the call
allocation-free, so it can be captured in a CUDA/HIP graph and replayed.
"""
from __future__ import annotations

import math
import os
from dataclasses import dataclass

import torch

from perfreport.kernels.paged_cache import (FP8_DTYPES, cache_geometry, default_fp8_dtype,
                                            normalize_layout)

_SM_COUNT: dict = {}


@dataclass
class PAWorkspace:
    """Split-K partials: max (log2 domain) and sum ``[S, H_KV, P, rows]``, accumulator ``[..., Dv]``."""

    max_logits: torch.Tensor
    exp_sums: torch.Tensor
    tmp_out: torch.Tensor

    @property
    def num_partitions(self) -> int:
        return self.tmp_out.shape[2]


def make_workspace(num_seqs: int, num_kv_heads: int, rows: int, v_head_dim: int,
                   num_partitions: int, device) -> PAWorkspace:
    """Workspace for ``rows = q_len * (H_Q / H_KV)`` query rows per KV head."""
    shape = (num_seqs, num_kv_heads, num_partitions, rows)
    f32 = dict(dtype=torch.float32, device=device)
    return PAWorkspace(torch.empty(shape, **f32), torch.empty(shape, **f32),
                       torch.empty(shape + (v_head_dim,), **f32))


def _sm_count(device: torch.device) -> int:
    if device.type != "cuda":
        return 8
    idx = device.index if device.index is not None else torch.cuda.current_device()
    if idx not in _SM_COUNT:
        _SM_COUNT[idx] = torch.cuda.get_device_properties(idx).multi_processor_count
    return _SM_COUNT[idx]


def auto_partitions(num_seqs: int, num_kv_heads: int, work_pages: int, page: int,
                    device: torch.device) -> int:
    """About 4 programs per SM/CU, each partition at least 256 tokens (untuned default)."""
    target = 4 * _sm_count(device)
    min_pages = max(1, 256 // page)
    want = -(-target // max(1, num_seqs * num_kv_heads))
    return max(1, min(want, -(-work_pages // min_pages)))


def _kv_kind(key_cache: torch.Tensor, value_cache: torch.Tensor, fp8_dtype) -> tuple[str, torch.dtype]:
    kd = key_cache.dtype
    if kd == torch.bfloat16:
        kind, storage = "bf16", torch.bfloat16
    elif kd in FP8_DTYPES:
        kind, storage = "fp8", kd
    elif kd == torch.uint8:
        kind, storage = "fp8", fp8_dtype or default_fp8_dtype(key_cache.device)
        if storage not in FP8_DTYPES:
            raise ValueError(f"fp8_dtype must be float8_e4m3fn or float8_e4m3fnuz, got {storage}")
    else:
        raise ValueError(f"unsupported KV cache dtype {kd}: expected bfloat16 or FP8 "
                         "(float8_e4m3fn, float8_e4m3fnuz, or uint8 storage)")
    if value_cache.dtype != kd:
        raise ValueError(f"K and V caches have different dtypes ({kd} and {value_cache.dtype})")
    return kind, storage


def _scale_arg(s, name: str, device) -> tuple[float, torch.Tensor | None]:
    """(host multiplier, device tensor or None) for a per-tensor scale."""
    if s is None:
        return 1.0, None
    if isinstance(s, torch.Tensor):
        if s.numel() != 1:
            raise ValueError(f"{name} must hold one element (per-tensor scale), got shape {tuple(s.shape)}")
        if s.device != device:
            raise ValueError(f"{name} is on {s.device}, the caches are on {device}")
        return 1.0, s.reshape(1).float() if s.dtype != torch.float32 else s.reshape(1)
    return float(s), None


def paged_attention_decode(query, key_cache, value_cache, block_tables, context_lens, *, scale: float,
                           k_scale=None, v_scale=None, q_len: int, layout: str = "NHD",
                           num_partitions="auto", workspace: PAWorkspace | None = None,
                           out: torch.Tensor | None = None, max_context: int | None = None,
                           fp8_dtype: torch.dtype | None = None, num_warps: int | None = None,
                           num_stages: int = 2) -> torch.Tensor:
    """Paged-attention decode. ``query [S*q_len, H_Q, Dk]`` bf16 -> ``out [S*q_len, H_Q, Dv]`` bf16.

    ``k_scale``/``v_scale``: per-tensor dequantization scales for FP8 caches (1-element device
    tensors, read by the kernel; floats are folded in on the host; None means 1).
    ``num_partitions``: "auto" or an int; with a ``workspace`` its partition count is used.
    ``max_context``: optional host-side upper bound of ``context_lens`` (validation and partition
    sizing without a device read). ``fp8_dtype``: the FP8 format of ``uint8`` caches (default:
    e4m3fnuz on gfx942, e4m3fn elsewhere).
    """
    from perfreport.kernels import paged_attention as K  # imports triton

    layout = normalize_layout(layout)
    if not isinstance(q_len, int) or q_len < 1:
        raise ValueError(f"q_len must be a positive integer, got {q_len!r}")
    if query.dim() != 3:
        raise ValueError("query must be 3-D: [num_seqs * q_len, q_heads, head_dim]")
    if query.dtype != torch.bfloat16:
        raise ValueError(f"query must be bfloat16, got {query.dtype}")
    kind, storage = _kv_kind(key_cache, value_cache, fp8_dtype)
    nb, page, hkv, dk, dv = cache_geometry(key_cache, value_cache, layout)
    rows_total, hq, qdk = query.shape
    if hq % hkv:
        raise ValueError(f"query heads ({hq}) are not divisible by KV heads ({hkv})")
    if dk % 16 or dv % 16:
        raise ValueError(f"head dims must be multiples of 16 (K {dk}, V {dv})")
    if qdk != dk:
        raise ValueError(f"query head dim {qdk} does not match the K cache head dim {dk}")
    if page < 16 or page > 256 or page & (page - 1):
        raise ValueError(f"page size must be a power of two in [16, 256], got {page}")
    x = 16 // key_cache.element_size()
    if layout == "5D" and key_cache.shape[-1] != x:
        raise ValueError(f"5D K cache: last dim must be {x} (16 bytes of {key_cache.dtype}), "
                         f"got {key_cache.shape[-1]}")
    if key_cache.stride(-1) != 1 or value_cache.stride(-1) != 1:
        raise ValueError("K and V caches must be contiguous in their last dimension")
    if rows_total % q_len:
        raise ValueError(f"query rows ({rows_total}) are not a multiple of q_len ({q_len})")
    num_seqs = rows_total // q_len
    if block_tables.dtype != torch.int32 or block_tables.dim() != 2:
        raise ValueError(f"block_tables must be a 2-D int32 tensor, got {block_tables.dtype} "
                         f"with {block_tables.dim()} dims")
    if block_tables.shape[0] != num_seqs:
        raise ValueError(f"block_tables has {block_tables.shape[0]} rows for {num_seqs} sequences")
    if context_lens.dtype != torch.int32 or context_lens.dim() != 1 or context_lens.numel() != num_seqs:
        raise ValueError(f"context_lens must be a 1-D int32 tensor of {num_seqs} lengths")
    width = block_tables.shape[1]
    span = width * page
    dev = key_cache.device
    for name, t in (("query", query), ("value_cache", value_cache), ("block_tables", block_tables),
                    ("context_lens", context_lens)):
        if t.device != dev:
            raise ValueError(f"{name} is on {t.device}, the key cache is on {dev}")
    if dev.type != "cuda" and os.environ.get("TRITON_INTERPRET") != "1":
        raise ValueError("the Triton kernel needs CUDA/HIP tensors (or TRITON_INTERPRET=1 on CPU)")
    if context_lens.device.type == "cpu":
        lo, hi = int(context_lens.min()), int(context_lens.max())
        if lo < 1:
            raise ValueError(f"context lengths must be >= 1, got {lo}")
        if max_context is None:
            max_context = hi
        elif hi > max_context:
            raise ValueError(f"context length {hi} exceeds max_context {max_context}")
    if max_context is not None:
        if max_context < 1:
            raise ValueError(f"context lengths must be >= 1, got max_context {max_context}")
        if max_context > span:
            raise ValueError(f"block table is too narrow: {width} pages of {page} hold {span} tokens, "
                             f"context needs {max_context}")
    if storage == torch.float8_e4m3fnuz and dev.type == "cuda" and not torch.version.hip:
        raise ValueError("float8_e4m3fnuz caches are an AMD gfx942 format; use float8_e4m3fn on NVIDIA")

    group = hq // hkv
    rows = q_len * group
    work_pages = -(-max_context // page) if max_context is not None else width
    if workspace is not None:
        parts = workspace.num_partitions
        if num_partitions != "auto" and int(num_partitions) != parts:
            raise ValueError(f"num_partitions {num_partitions} does not match the workspace ({parts})")
        want = (num_seqs, hkv, parts, rows)
        if tuple(workspace.max_logits.shape) != want or tuple(workspace.tmp_out.shape) != want + (dv,):
            raise ValueError(f"workspace shape does not match (expected partials {want} x Dv {dv})")
    elif num_partitions == "auto":
        parts = auto_partitions(num_seqs, hkv, work_pages, page, dev)
    else:
        try:
            parts = int(num_partitions)
        except (TypeError, ValueError):
            raise ValueError(f"num_partitions must be 'auto' or a positive integer, got {num_partitions!r}") from None
        if parts < 1:
            raise ValueError(f"num_partitions must be >= 1, got {parts}")
    pages_per_part = max(1, -(-work_pages // parts))
    if out is None:
        out = torch.empty(rows_total, hq, dv, dtype=torch.bfloat16, device=dev)
    elif tuple(out.shape) != (rows_total, hq, dv) or out.dtype != torch.bfloat16 or out.stride(-1) != 1:
        raise ValueError(f"out must be a bfloat16 tensor of shape {(rows_total, hq, dv)}")
    direct = parts == 1
    if not direct and workspace is None:
        workspace = make_workspace(num_seqs, hkv, rows, dv, parts, dev)

    k_mult, ks = _scale_arg(k_scale, "k_scale", dev)
    v_mult, vs = _scale_arg(v_scale, "v_scale", dev)
    if key_cache.dtype == torch.uint8:
        key_cache, value_cache = key_cache.view(storage), value_cache.view(storage)
    query = query if query.stride(-1) == 1 else query.contiguous()
    if layout == "NHD":
        k_strides = (key_cache.stride(0), key_cache.stride(2), key_cache.stride(1), 0)
        v_strides = (value_cache.stride(0), value_cache.stride(2), value_cache.stride(1))
    else:
        k_strides = (key_cache.stride(0), key_cache.stride(1), key_cache.stride(3), key_cache.stride(2))
        v_strides = (value_cache.stride(0), value_cache.stride(1), value_cache.stride(2))
    dka, dkb = K.split_dim(dk)
    dva, dvb = K.split_dim(dv)
    block_m = max(16, 1 << (rows - 1).bit_length())
    dummy = out  # any tensor: unused pointer arguments
    ws = workspace
    args = dict(q=query, k=key_cache, v=value_cache, bt=block_tables, ctx=context_lens,
                ks=ks if ks is not None else dummy, vs=vs if vs is not None else dummy, out=out,
                m=ws.max_logits if ws is not None else dummy, l=ws.exp_sums if ws is not None else dummy,
                acc=ws.tmp_out if ws is not None else dummy,
                qk_scale=float(scale) * k_mult * math.log2(math.e), v_mult=v_mult,
                q_strides=(query.stride(0), query.stride(1)), o_strides=(out.stride(0), out.stride(1)),
                stride_bt=block_tables.stride(0), k_strides=k_strides, v_strides=v_strides,
                max_pages=width, pages_per_part=pages_per_part, num_parts=parts)
    cfg = dict(Q_LEN=q_len, GROUP=group, BLOCK_M=block_m, DK=dk, DKA=dka, DKB=dkb, DV=dv, DVA=dva,
               DVB=dvb, PAGE=page, BLOCK_N=max(page, 64), X=x if layout == "5D" else 1,
               IS_5D=layout == "5D", K_SCALE_T=ks is not None, V_SCALE_T=vs is not None, DIRECT=direct,
               DOT_F32=dev.type != "cuda")
    if num_warps is None:  # from AOT compiles: no spills with these (sm_90a; gfx942/gfx950 wave64)
        num_warps = 4 if (torch.version.hip or block_m < 64) else 8
    K.launch((num_seqs, hkv, parts), (num_seqs, hkv), args, cfg, num_warps, num_stages)
    return out




def aot_compile(target: str, *, kv: str = "bf16", dk: int = 192, dv: int = 128, q_len: int = 4,
                group: int = 16, page: int = 64, layout: str = "NHD", parts: int = 2,
                num_warps: int | None = None):
    """Compile both kernels for a GPU target without a GPU (``"sm_90a"``, ``"gfx942"``, ...).

    Uses the same constexprs and stride divisibility hints the JIT would use at these shapes.
    Returns the compiled partition kernel (``.asm`` holds ptx/amdgcn) for inspection.
    """
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    from perfreport.kernels import paged_attention as K

    hip = target.startswith("gfx")
    tgt = GPUTarget("hip", target, 64) if hip else GPUTarget("cuda", int(target[3:5]), 32)
    kv_ty = {"bf16": "*bf16", "fp8": "*fp8e4nv", "fp8_fnuz": "*fp8e4b8"}[kv]
    rows = q_len * group
    dka, dkb = K.split_dim(dk)
    dva, dvb = K.split_dim(dv)
    fp8 = kv != "bf16"
    consts = dict(Q_LEN=q_len, GROUP=group, BLOCK_M=max(16, 1 << (rows - 1).bit_length()), DK=dk,
                  DKA=dka, DKB=dkb, DV=dv, DVA=dva, DVB=dvb, PAGE=page, BLOCK_N=max(page, 64),
                  X=(16 if fp8 else 8) if layout == "5D" else 1, IS_5D=layout == "5D",
                  K_SCALE_T=fp8, V_SCALE_T=fp8, DIRECT=parts == 1, DOT_F32=False)
    ptr_types = dict(q_ptr="*bf16", k_ptr=kv_ty, v_ptr=kv_ty, bt_ptr="*i32", ctx_ptr="*i32",
                     ks_ptr="*fp32", vs_ptr="*fp32", out_ptr="*bf16", m_ptr="*fp32", l_ptr="*fp32",
                     acc_ptr="*fp32", qk_scale="fp32", v_mult="fp32")
    warps = num_warps or (4 if hip or consts["BLOCK_M"] < 64 else 8)
    out = None
    for fn in (K._pa_decode_partition, K._pa_decode_reduce):
        names = fn.arg_names
        c = {k: v for k, v in consts.items() if k in names}
        sig = {n: "constexpr" if n in c else ptr_types.get(n, "i32") for n in names}
        attrs = {(i,): [["tt.divisibility", 16]] for i, n in enumerate(names)
                 if sig[n].startswith("*") or n.startswith("stride")}
        ck = triton.compile(ASTSource(fn, sig, c, attrs), target=tgt,
                            options=dict(num_warps=warps if fn is K._pa_decode_partition else 4,
                                         num_stages=2))
        out = out or ck
    return out


__all__ = ["PAWorkspace", "aot_compile", "auto_partitions", "make_workspace", "paged_attention_decode"]
