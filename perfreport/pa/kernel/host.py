"""Host wrapper for the Triton paged-attention decode kernel: validation, partitioning, launch.

Validation happens before any launch and raises ``ValueError`` with a one-line message. It never
reads device memory (no host sync). The *values* of ``context_lens`` are checked (each >= q_len,
so every new token sees at least one key, hence also >= 1; the block table wide enough) when
``context_lens`` is a CPU tensor, or against the host-side bounds ``min_context`` /
``max_context`` when the caller gives them.

Device-side rule (device lengths without ``min_context``): ``check_lengths=True`` (the default)
queues ``torch._assert_async(context_lens.min() >= q_len)`` on the stream, which makes the next
synchronizing call fail (on CUDA/HIP a device-side assert, after which the process must restart)
instead of returning garbage; ``check_lengths=False`` skips it (graph capture, timing) and the
kernel then writes zeros for every token that sees no key (context 0 included). The kernel never
reads past the block table's width whatever the lengths are.

Workspaces: with more than one partition the kernel writes partials. Pass a
:class:`PAWorkspace` (see :func:`make_workspace`) and an ``out`` tensor to make the call
allocation-free, so it can be captured in a CUDA/HIP graph and replayed.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass

import torch

from perfreport.pa.kernel.cache import cache_geometry, normalize_layout
from perfreport.pa.kernel.host_checks import cache_strides, check_context_lengths, kv_kind, scale_arg
from perfreport.pa.kernel.partitions import CTAS_PER_SM, plan_partitions

_SM_COUNT: dict = {}
MAX_PARTITIONS = 4096
MAX_ROWS = 256  # query rows per KV head in one tile (registers: rows x Dv fp32 accumulators)


@dataclass
class PAWorkspace:
    """Split-K partials: max (log2 domain) and sum ``[S, H_KV, P, rows]`` (fp32), accumulator
    ``[..., Dv]`` (fp32, or bf16 holding each partition's normalized output)."""

    max_logits: torch.Tensor
    exp_sums: torch.Tensor
    tmp_out: torch.Tensor

    @property
    def num_partitions(self) -> int:
        return self.tmp_out.shape[2]


def make_workspace(
    num_seqs: int, num_kv_heads: int, rows: int, v_head_dim: int, num_partitions: int, device, partials: str = "fp32"
) -> PAWorkspace:
    """Workspace for ``rows = q_len * (H_Q / H_KV)`` query rows per KV head."""
    shape = (num_seqs, num_kv_heads, num_partitions, rows)
    f32 = dict(dtype=torch.float32, device=device)
    acc_dt = {"fp32": torch.float32, "bf16": torch.bfloat16}[partials]
    return PAWorkspace(
        torch.empty(shape, **f32),
        torch.empty(shape, **f32),
        torch.empty(shape + (v_head_dim,), dtype=acc_dt, device=device),
    )


def sm_count(device: torch.device) -> int:
    """SMs (CUs on AMD) of a GPU device; 8 for the CPU interpreter."""
    if device.type != "cuda":
        return 8
    idx = device.index if device.index is not None else torch.cuda.current_device()
    if idx not in _SM_COUNT:
        _SM_COUNT[idx] = torch.cuda.get_device_properties(idx).multi_processor_count
    return _SM_COUNT[idx]


def auto_partitions(
    num_seqs: int, num_kv_heads: int, work_pages: int, page: int, device: torch.device, ctas_per_sm: int = CTAS_PER_SM
) -> int:
    """Partition count whose last wave of CTAs (``SMs x ctas_per_sm``) is (nearly) full on this
    device. :func:`decode_partitions` gives the count with the compiled kernel's own occupancy."""
    return plan_partitions(num_seqs * num_kv_heads, work_pages, page, sm_count(device), ctas_per_sm)


def device_length_rule(context_lens: torch.Tensor, q_len: int) -> None:
    """Queue ``min(context_lens) >= q_len`` as an asynchronous device assert (no host sync)."""
    torch._assert_async(context_lens.min() >= q_len)


def paged_attention_decode(
    query,
    key_cache,
    value_cache,
    block_tables,
    context_lens,
    *,
    scale: float,
    k_scale=None,
    v_scale=None,
    q_len: int,
    layout: str = "NHD",
    num_partitions="auto",
    workspace: PAWorkspace | None = None,
    out: torch.Tensor | None = None,
    max_context: int | None = None,
    min_context: int | None = None,
    check_lengths: bool = True,
    fp8_dtype: torch.dtype | None = None,
    fp8_mma: str = "f16",
    partials: str = "fp32",
    num_warps: int | None = None,
    num_stages: int | None = None,
    block_n: int | None = None,
    _plan_only: bool = False,
) -> torch.Tensor:
    """Paged-attention decode. ``query [S*q_len, H_Q, Dk]`` bf16 -> ``out [S*q_len, H_Q, Dv]`` bf16.

    ``k_scale``/``v_scale``: FP8 dequantization scales: one per tensor (a 1-element tensor, or
    a float folded in on the host), per KV head ``[H_KV]`` or per token ``[blocks, H_KV, page]``;
    None means 1. ``num_partitions``: "auto" or an int; with a ``workspace`` its partition count
    is used. ``min_context``/``max_context``: optional host-side bounds of ``context_lens``
    (validation and partition sizing without a device read). ``fp8_dtype``: the FP8 format of
    ``uint8`` caches. ``fp8_mma``: "f16" (dequantize FP8 K/V to f16) or "fp8" (FP8 MMAs, Q and P
    quantized). ``partials``: "fp32" or "bf16" split-K partials. ``num_warps``, ``num_stages``,
    ``block_n`` (tokens per tile, a power of two in [16, 128]): tuning knobs (defaults per
    target from the compiled occupancy: :mod:`perfreport.pa.kernel.tuning`). ``"auto"``
    partitions fill the waves of the CTAs/SM the compiled kernel achieves.
    """
    from perfreport.pa.kernel import launch as L  # imports triton
    from perfreport.pa.kernel import tuning as T

    layout = normalize_layout(layout)
    if not isinstance(q_len, int) or q_len < 1:
        raise ValueError(f"q_len must be a positive integer, got {q_len!r}")
    if query.dim() != 3:
        raise ValueError("query must be 3-D: [num_seqs * q_len, q_heads, head_dim]")
    if query.dtype != torch.bfloat16:
        raise ValueError(f"query must be bfloat16, got {query.dtype}")
    if fp8_mma not in ("f16", "fp8"):
        raise ValueError(f"fp8_mma must be 'f16' or 'fp8', got {fp8_mma!r}")
    if partials not in ("fp32", "bf16"):
        raise ValueError(f"partials must be 'fp32' or 'bf16', got {partials!r}")
    if block_n is not None and (block_n not in (16, 32, 64, 128)):
        raise ValueError(f"block_n must be 16, 32, 64 or 128, got {block_n!r}")
    if num_stages is not None and (not isinstance(num_stages, int) or not 1 <= num_stages <= 6):
        raise ValueError(f"num_stages must be an integer in [1, 6], got {num_stages!r}")
    kind, storage = kv_kind(key_cache, value_cache, fp8_dtype)
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
        raise ValueError(f"5D K cache: last dim must be {x} (16 bytes of {key_cache.dtype}), got {key_cache.shape[-1]}")
    if key_cache.stride(-1) != 1 or value_cache.stride(-1) != 1:
        raise ValueError("K and V caches must be contiguous in their last dimension")
    if layout == "5D" and value_cache.dim() == 5 and value_cache.stride(3) != value_cache.shape[-1]:
        raise ValueError(
            f"vectorized 5D V cache: the Dv dimension's stride must be {value_cache.shape[-1]} "
            f"(its last two dims contiguous), got {value_cache.stride(3)}"
        )
    if rows_total % q_len:
        raise ValueError(f"query rows ({rows_total}) are not a multiple of q_len ({q_len})")
    num_seqs = rows_total // q_len
    if block_tables.dtype != torch.int32 or block_tables.dim() != 2:
        raise ValueError(
            f"block_tables must be a 2-D int32 tensor, got {block_tables.dtype} with {block_tables.dim()} dims"
        )
    if block_tables.shape[0] != num_seqs:
        raise ValueError(f"block_tables has {block_tables.shape[0]} rows for {num_seqs} sequences")
    if context_lens.dtype != torch.int32 or context_lens.dim() != 1 or context_lens.numel() != num_seqs:
        raise ValueError(f"context_lens must be a 1-D int32 tensor of {num_seqs} lengths")
    width = block_tables.shape[1]
    dev = key_cache.device
    for name, t in (
        ("query", query),
        ("value_cache", value_cache),
        ("block_tables", block_tables),
        ("context_lens", context_lens),
    ):
        if t.device != dev:
            raise ValueError(f"{name} is on {t.device}, the key cache is on {dev}")
    if dev.type != "cuda" and os.environ.get("TRITON_INTERPRET") != "1":
        raise ValueError("the Triton kernel needs CUDA/HIP tensors (or TRITON_INTERPRET=1 on CPU)")
    min_context, max_context = check_context_lengths(
        context_lens, q_len, min_context, max_context, width * page, width, page
    )
    if storage == torch.float8_e4m3fnuz and dev.type == "cuda" and not torch.version.hip:
        raise ValueError("float8_e4m3fnuz caches are an AMD gfx942 format; use float8_e4m3fn on NVIDIA")

    group = hq // hkv
    rows = q_len * group
    if rows > MAX_ROWS:
        raise ValueError(
            f"q_len x H_Q/H_KV = {rows} query rows per KV head; the kernel's tile holds at most {MAX_ROWS}"
        )
    work_pages = -(-max_context // page) if max_context is not None else width
    acc_dt = torch.bfloat16 if partials == "bf16" else torch.float32
    if out is not None and (
        tuple(out.shape) != (rows_total, hq, dv) or out.dtype != torch.bfloat16 or out.stride(-1) != 1
    ):
        raise ValueError(f"out must be a bfloat16 tensor of shape {(rows_total, hq, dv)}")
    k_mult, ks, k_mode, ksb, ksh = scale_arg(k_scale, "k_scale", dev, nb, hkv, page)
    v_mult, vs, v_mode, vsb, vsh = scale_arg(v_scale, "v_scale", dev, nb, hkv, page)
    if key_cache.dtype == torch.uint8:
        key_cache, value_cache = key_cache.view(storage), value_cache.view(storage)
    query = query if query.stride(-1) == 1 else query.contiguous()
    k_strides, v_strides, v_layout = cache_strides(key_cache, value_cache, layout)
    target = T.device_target(dev)
    mma = fp8_mma if kind == "fp8" else "bf16"
    d_block_n, d_stages = T.default_config(target, kind, mma)
    num_stages = d_stages if num_stages is None else num_stages
    # unused pointer arguments get any tensor; the output and partials are given as dtypes until
    # allocated (a planning compile needs only their dtypes: triton's MockTensor)
    args = dict(
        q=query,
        k=key_cache,
        v=value_cache,
        bt=block_tables,
        ctx=context_lens,
        ks=ks if ks is not None else query,
        vs=vs if vs is not None else query,
        out=torch.bfloat16 if out is None else out,
        m=torch.float32,
        l=torch.float32,
        acc=acc_dt,
        qk_scale=float(scale) * k_mult * math.log2(math.e),
        v_mult=v_mult,
        q_strides=(query.stride(0), query.stride(1)),
        o_strides=(hq * dv, dv) if out is None else (out.stride(0), out.stride(1)),
        stride_bt=block_tables.stride(0),
        k_strides=k_strides,
        v_strides=v_strides,
        ks_strides=(ksb, ksh),
        vs_strides=(vsb, vsh),
        max_pages=width,
        num_parts=2,
        num_kv=hkv,
    )
    cfg = L.make_cfg(
        q_len=q_len,
        group=group,
        dk=dk,
        dv=dv,
        page=page,
        k_5d=layout == "5D",
        v_layout=v_layout,
        x=x,
        kv=kind,
        k_scale=k_mode,
        v_scale=v_mode,
        mma=mma,
        direct=False,
        part_bf16=partials == "bf16",
        fp8_max=torch.finfo(storage).max if kind == "fp8" else 1.0,
        dot_f32=dev.type != "cuda",
        block_n=block_n or d_block_n,
    )
    if num_warps is None:
        num_warps = L.default_warps(cfg["BLOCK_M"], bool(torch.version.hip))
    if workspace is not None:
        parts = workspace.num_partitions
        if num_partitions != "auto" and int(num_partitions) != parts:
            raise ValueError(f"num_partitions {num_partitions} does not match the workspace ({parts})")
        want = (num_seqs, hkv, parts, rows)
        if tuple(workspace.max_logits.shape) != want or tuple(workspace.tmp_out.shape) != want + (dv,):
            raise ValueError(f"workspace shape does not match (expected partials {want} x Dv {dv})")
        if workspace.tmp_out.dtype != acc_dt:
            raise ValueError(
                f"workspace accumulator is {workspace.tmp_out.dtype}, partials={partials!r} needs {acc_dt}"
            )
    elif num_partitions == "auto":  # waves of the CTAs this very kernel keeps resident (its compile)
        ctas = T.ctas_per_sm(args, cfg, num_warps, num_stages, dev, target)
        parts = auto_partitions(num_seqs, hkv, work_pages, page, dev, ctas)
    else:
        try:
            parts = int(num_partitions)
        except (TypeError, ValueError):
            raise ValueError(f"num_partitions must be 'auto' or a positive integer, got {num_partitions!r}") from None
    if not 1 <= parts <= MAX_PARTITIONS:
        raise ValueError(f"num_partitions must be in [1, {MAX_PARTITIONS}], got {parts}")
    if _plan_only:
        return parts
    if out is None:
        out = torch.empty(rows_total, hq, dv, dtype=torch.bfloat16, device=dev)
    cfg["DIRECT"] = parts == 1
    if parts > 1 and workspace is None:
        workspace = make_workspace(num_seqs, hkv, rows, dv, parts, dev, partials)
    ws = workspace
    args.update(
        out=out,
        m=ws.max_logits if ws is not None else out,
        l=ws.exp_sums if ws is not None else out,
        acc=ws.tmp_out if ws is not None else out,
        num_parts=parts,
    )
    if min_context is None and check_lengths and context_lens.device.type != "cpu":
        device_length_rule(context_lens, q_len)
    L.launch((num_seqs, hkv, parts), (num_seqs * hkv * rows,), args, cfg, num_warps, num_stages)
    return out


def decode_partitions(query, key_cache, value_cache, block_tables, context_lens, **kw) -> int:
    """The partition count :func:`paged_attention_decode` takes with these arguments (``"auto"``:
    from the compiled kernel's CTAs per SM), without launching anything: size a caller-owned
    workspace with it."""
    return paged_attention_decode(query, key_cache, value_cache, block_tables, context_lens, _plan_only=True, **kw)


def aot_compile(target: str, **kw):
    """See :func:`perfreport.pa.kernel.launch.aot_compile` (returns the partition kernel)."""
    from perfreport.pa.kernel.launch import aot_compile as aot

    return aot(target, **kw)[0]


__all__ = [
    "MAX_PARTITIONS",
    "PAWorkspace",
    "aot_compile",
    "auto_partitions",
    "cache_strides",
    "decode_partitions",
    "device_length_rule",
    "make_workspace",
    "paged_attention_decode",
    "sm_count",
]
