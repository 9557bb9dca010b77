"""Paged KV caches for the decode kernel: random caches, block tables, FP8 quantization, layouts.

Layouts (the kernel, the reference and the benchmark all use these names):

* ``"NHD"``: key_cache ``[num_blocks, page, H_KV, Dk]``, value_cache ``[num_blocks, page, H_KV, Dv]``.
* ``"5D"`` (the vectorized layout of the AMD kernels): key_cache ``[num_blocks, H_KV, Dk/x, page, x]``
  with ``x * element_size == 16`` bytes (x = 8 for BF16, 16 for FP8), and value_cache either
  ``[num_blocks, H_KV, Dv, page]`` (4-D) or the vectorized 5-D ``[num_blocks, H_KV, page/x, Dv, x]``
  of aiter's shuffled caches and FlyDSL's ``pa_decode_tile`` (token j, dim d at
  ``[j // x, d, j % x]``). The value cache's rank tells the two apart.

FP8 caches are quantized with scales (K and V separately): ``x ~= q * scale`` with
``scale = amax / fp8_max`` over the tensor (``"tensor"``, shape ``[1]``), over one KV head
(``"head"``, shape ``[H_KV]``) or over one token of one KV head (``"token"``, shape
``[num_blocks, H_KV, page]``, as aiter's shuffled caches keep them). Scales are float32 tensors on
the cache's device, computed there (no host sync). A cache may also be stored as ``uint8`` (vLLM
does); the kernel views it as the FP8 format the caller names.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

LAYOUTS = ("NHD", "5D")
FP8_DTYPES = (torch.float8_e4m3fn, torch.float8_e4m3fnuz)


def normalize_layout(layout: str) -> str:
    lay = str(layout).upper()
    if lay not in LAYOUTS:
        raise ValueError(f"unknown KV layout {layout!r}: expected NHD or 5D")
    return lay


def vector_width(dtype: torch.dtype) -> int:
    """x of the 5D layout: elements per 16 bytes."""
    return 16 // torch.empty((), dtype=dtype).element_size()


def default_fp8_dtype(device: torch.device | str | None = None) -> torch.dtype:
    """e4m3fnuz on gfx942 (MI300), e4m3fn elsewhere (NVIDIA, gfx950, CPU)."""
    dev = torch.device(device) if device is not None else None
    if torch.version.hip and torch.cuda.is_available() and (dev is None or dev.type == "cuda"):
        arch = getattr(torch.cuda.get_device_properties(dev or 0), "gcnArchName", "")
        if "gfx942" in arch or "gfx940" in arch or "gfx941" in arch:
            return torch.float8_e4m3fnuz
    return torch.float8_e4m3fn


SCALE_MODES = ("tensor", "head", "token")


def quantize_fp8(x: torch.Tensor, fp8_dtype: torch.dtype = torch.float8_e4m3fn, mode: str = "tensor"):
    """FP8 quantization of an NHD cache ``[blocks, page, H_KV, D]`` (any tensor for "tensor"):
    returns ``(q, scale)`` with ``x ~= q.float() * scale`` broadcast as the mode says (scale
    ``[1]``, ``[H_KV]`` or ``[blocks, H_KV, page]``)."""
    if fp8_dtype not in FP8_DTYPES:
        raise ValueError(f"unsupported FP8 dtype {fp8_dtype}")
    if mode not in SCALE_MODES:
        raise ValueError(f"unknown scale mode {mode!r}: expected one of {', '.join(SCALE_MODES)}")
    fmax = torch.finfo(fp8_dtype).max
    a = x.detach().abs().float()
    if mode == "tensor":
        scale = (a.amax().clamp_min(1e-12) / fmax).reshape(1)
        full = scale
    elif mode == "head":
        scale = a.amax(dim=(0, 1, 3)).clamp_min(1e-12) / fmax  # [H_KV]
        full = scale.reshape(1, 1, -1, 1)
    else:
        full = a.amax(dim=3, keepdim=True).clamp_min(1e-12) / fmax  # [blocks, page, H_KV, 1]
        scale = full[..., 0].permute(0, 2, 1).contiguous()  # [blocks, H_KV, page]
    q = (x.float() / full).clamp(-fmax, fmax).to(fp8_dtype)
    return q, scale


def nhd_to_5d(key_cache: torch.Tensor, value_cache: torch.Tensor, v5: bool = False):
    """NHD caches -> 5D caches (new contiguous tensors); ``v5``: V in the vectorized 5-D form."""
    nb, page, hkv, dk = key_cache.shape
    x = vector_width(key_cache.dtype)
    if dk % x:
        raise ValueError(f"K head dim {dk} is not a multiple of the 5D vector width {x}")
    if v5 and page % x:
        raise ValueError(f"page {page} is not a multiple of the 5D vector width {x}")
    k5 = key_cache.reshape(nb, page, hkv, dk // x, x).permute(0, 2, 3, 1, 4).contiguous()
    if v5:
        dv = value_cache.shape[-1]
        vv = value_cache.reshape(nb, page // x, x, hkv, dv).permute(0, 3, 1, 4, 2).contiguous()
    else:
        vv = value_cache.permute(0, 2, 3, 1).contiguous()
    return k5, vv


def fived_to_nhd(key_cache: torch.Tensor, value_cache: torch.Tensor):
    """5D caches (V 4-D or vectorized 5-D) -> NHD caches (new contiguous tensors)."""
    nb, hkv, dkx, page, x = key_cache.shape
    kn = key_cache.permute(0, 3, 1, 2, 4).reshape(nb, page, hkv, dkx * x).contiguous()
    if value_cache.dim() == 5:  # [nb, H, page/x, Dv, x] -> [nb, page/x, x, H, Dv]
        _, _, px, dv, vx = value_cache.shape
        vn = value_cache.permute(0, 2, 4, 1, 3).reshape(nb, px * vx, hkv, dv).contiguous()
    else:
        vn = value_cache.permute(0, 3, 1, 2).contiguous()
    return kn, vn


def cache_geometry(key_cache: torch.Tensor, value_cache: torch.Tensor, layout: str):
    """(num_blocks, page, H_KV, Dk, Dv) of a cache pair in ``layout``."""
    if normalize_layout(layout) == "NHD":
        if key_cache.dim() != 4 or value_cache.dim() != 4:
            raise ValueError("NHD caches must be 4-D: [num_blocks, page, kv_heads, head_dim]")
        nb, page, hkv, dk = key_cache.shape
        vb, vpage, vh, dv = value_cache.shape
    else:
        if key_cache.dim() != 5 or value_cache.dim() not in (4, 5):
            raise ValueError(
                "5D caches: key [num_blocks, kv_heads, Dk/x, page, x], value "
                "[num_blocks, kv_heads, Dv, page] or [num_blocks, kv_heads, page/x, Dv, x]"
            )
        nb, hkv, dkx, page, x = key_cache.shape
        dk = dkx * x
        if value_cache.dim() == 5:
            vb, vh, vpx, dv, vx = value_cache.shape
            if vx != x:
                raise ValueError(f"5D value cache: last dim must be {x} like the key cache's, got {vx}")
            vpage = vpx * vx
        else:
            vb, vh, dv, vpage = value_cache.shape
    if (nb, page, hkv) != (vb, vpage, vh):
        raise ValueError(
            f"K and V caches disagree: K has blocks={nb} page={page} kv_heads={hkv}, "
            f"V has blocks={vb} page={vpage} kv_heads={vh}"
        )
    return nb, page, hkv, dk, dv


def make_block_tables(
    context_lens: list[int], page_size: int, *, extra_cols: int = 0, generator: torch.Generator | None = None
):
    """Block tables with scattered pages: ``(block_tables int32 [S, W], num_blocks)``.

    Every sequence owns distinct physical blocks, in a random order; unused entries are 0.
    """
    pages = [-(-int(c) // page_size) for c in context_lens]
    width = max(pages) + extra_cols
    num_blocks = sum(pages)
    perm = torch.randperm(num_blocks, generator=generator).to(torch.int32)
    bt = torch.zeros(len(pages), max(width, 1), dtype=torch.int32)
    start = 0
    for i, n in enumerate(pages):
        bt[i, :n] = perm[start : start + n]
        start += n
    return bt, num_blocks


@dataclass
class PAInputs:
    """One decode call's inputs, as the host wrapper takes them."""

    query: torch.Tensor  # [S*q_len, H_Q, Dk] bf16
    key_cache: torch.Tensor
    value_cache: torch.Tensor
    block_tables: torch.Tensor  # [S, W] int32
    context_lens: torch.Tensor  # [S] int32
    context_list: list[int]  # the same on the host (no device read needed)
    scale: float
    k_scale: torch.Tensor | None
    v_scale: torch.Tensor | None
    q_len: int
    layout: str
    kv_dtype: str  # "bf16" | "fp8"
    fp8_dtype: torch.dtype | None
    scale_mode: str = "tensor"  # FP8 K scales: "tensor", "head" or "token"
    v_scale_mode: str = "tensor"  # FP8 V scales

    @property
    def num_seqs(self) -> int:
        return len(self.context_list)

    @property
    def max_context(self) -> int:
        return max(self.context_list)

    def kwargs(self) -> dict:
        """Keyword arguments for ``paged_attention_decode`` / ``paged_attention_ref``."""
        return dict(scale=self.scale, k_scale=self.k_scale, v_scale=self.v_scale, q_len=self.q_len, layout=self.layout)


def build_inputs(
    context_lens: list[int],
    *,
    q_len: int = 1,
    q_heads: int = 16,
    kv_heads: int = 1,
    head_dim: int = 192,
    v_head_dim: int = 128,
    page_size: int = 64,
    kv_dtype: str = "bf16",
    layout: str = "NHD",
    fp8_dtype: torch.dtype | None = None,
    uint8_storage: bool = False,
    device: str | torch.device = "cpu",
    seed: int = 0,
    v5: bool = False,
    scale_mode: str = "tensor",
    v_scale_mode: str | None = None,
    v_gain: float = 1.0,
) -> PAInputs:
    """Random query and paged caches for one decode step (values ~ N(0, 1)).

    ``v5``: with ``layout="5D"``, V in the vectorized 5-D form; ``scale_mode``: FP8 scales per
    tensor, KV head or token (see :func:`quantize_fp8`) for K, and for V unless ``v_scale_mode``
    says otherwise; ``v_gain``: V's values are N(0, v_gain^2) (a gain of 1000 gives FP8 V scales
    above 1)."""
    layout = normalize_layout(layout)
    dev = torch.device(device)
    gen = torch.Generator().manual_seed(seed)
    bt, nb = make_block_tables(context_lens, page_size, generator=gen)
    s = len(context_lens)
    q = torch.randn(s * q_len, q_heads, head_dim, generator=gen).to(torch.bfloat16)
    dgen = torch.Generator(device=dev).manual_seed(seed + 1)
    k = torch.randn(nb, page_size, kv_heads, head_dim, generator=dgen, device=dev, dtype=torch.bfloat16)
    v = torch.randn(nb, page_size, kv_heads, v_head_dim, generator=dgen, device=dev, dtype=torch.bfloat16)
    if v_gain != 1.0:
        v = (v.float() * v_gain).to(torch.bfloat16)
    ks = vs = None
    fdt = None
    if kv_dtype == "fp8":
        fdt = fp8_dtype or default_fp8_dtype(dev)
        k, ks = quantize_fp8(k, fdt, scale_mode)
        v, vs = quantize_fp8(v, fdt, v_scale_mode or scale_mode)
    elif kv_dtype != "bf16":
        raise ValueError(f"unknown KV dtype {kv_dtype!r}: expected bf16 or fp8")
    if layout == "5D":
        k, v = nhd_to_5d(k, v, v5=v5)
    if uint8_storage and fdt is not None:
        k, v = k.view(torch.uint8), v.view(torch.uint8)
    return PAInputs(
        query=q.to(dev),
        key_cache=k,
        value_cache=v,
        block_tables=bt.to(dev),
        context_lens=torch.tensor(context_lens, dtype=torch.int32, device=dev),
        context_list=[int(c) for c in context_lens],
        scale=head_dim**-0.5,
        k_scale=ks,
        v_scale=vs,
        q_len=q_len,
        layout=layout,
        kv_dtype=kv_dtype,
        fp8_dtype=fdt,
        scale_mode=scale_mode if fdt is not None else "tensor",
        v_scale_mode=(v_scale_mode or scale_mode) if fdt is not None else "tensor",
    )


__all__ = [
    "LAYOUTS",
    "FP8_DTYPES",
    "SCALE_MODES",
    "PAInputs",
    "build_inputs",
    "cache_geometry",
    "default_fp8_dtype",
    "fived_to_nhd",
    "make_block_tables",
    "nhd_to_5d",
    "normalize_layout",
    "quantize_fp8",
    "vector_width",
]
