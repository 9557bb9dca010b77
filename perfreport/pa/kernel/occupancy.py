"""Registers, shared memory and resident CTAs per SM/CU of a compiled kernel, read without a GPU.

NVIDIA (cubin): the register count is the ``EIATTR_REGCOUNT`` (0x2f) record of the cubin's
``.nv.info`` ELF section (what ``cuobjdump -res-usage`` prints as REG); shared memory is Triton's
dynamic ``metadata.shared`` plus the kernel's static ``.nv.shared.<kernel>`` section.

Occupancy rules for sm_90 (H100/H200), from the CUDA C++ Programming Guide, "Technical
Specifications per Compute Capability" (9.0) and the CUDA Occupancy Calculator:
65,536 registers per SM, allocated per warp in units of 256 (so a thread's count is rounded up to
a multiple of 8); at most 64 warps and 32 CTAs per SM; 228 KB of shared memory per SM, at most
227 KB per CTA, allocated in 128-byte units, plus 1 KB reserved by the system per CTA.

    CTAs/SM = min(32, floor(64 / warps), floor(floor(65536 / (32 * ceil8(regs))) / warps),
                  floor(228 KB / (ceil128(shared) + 1 KB)))

AMD (amdgcn text): LLVM writes ``.vgpr_count``, ``.sgpr_count``, ``.group_segment_fixed_size``
(LDS bytes) and ``; Occupancy: N`` (waves per SIMD) into the assembly; we report those as they are.
"""

from __future__ import annotations

import re
import struct
from dataclasses import dataclass

SM90 = dict(
    regs_per_sm=65536,
    reg_unit_per_thread=8,
    max_warps=64,
    max_ctas=32,
    smem_per_sm=228 * 1024,
    smem_per_cta=227 * 1024,
    smem_unit=128,
    smem_reserved=1024,
)


@dataclass(frozen=True)
class Occupancy:
    target: str
    regs: int  # per thread (NVIDIA) / VGPRs per lane (AMD)
    shared: int  # bytes per CTA (dynamic + static), LDS on AMD
    warps: int
    ctas_per_sm: int  # resident CTAs per SM (NVIDIA) / per CU (AMD: 4 SIMDs x waves / warps)
    limiter: str  # what bounds ctas_per_sm
    spills: int = 0  # NVIDIA: stack frame bytes per thread (0: no spills); AMD: VGPR spills


def _elf_sections(blob: bytes) -> dict[str, bytes]:
    if blob[:4] != b"\x7fELF" or blob[4] != 2:
        raise ValueError("not a 64-bit ELF cubin")
    shoff = struct.unpack_from("<Q", blob, 0x28)[0]
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", blob, 0x3A)
    heads = [struct.unpack_from("<IIQQQQIIQQ", blob, shoff + i * shentsize) for i in range(shnum)]
    names_off = heads[shstrndx][4]
    out = {}
    for h in heads:
        start = names_off + h[0]
        name = blob[start : blob.index(b"\0", start)].decode()
        out[name] = blob[h[4] : h[4] + h[5]] if h[1] != 8 else b"\0" * h[5]  # SHT_NOBITS: size only
    return out


def _nv_info(blob: bytes, attr_id: int) -> int | None:
    """The value of an EIFMT_SVAL (function index, value) record of the cubin's ``.nv.info``."""
    info = _elf_sections(blob).get(".nv.info", b"")
    i = 0
    while i + 2 <= len(info):
        fmt, attr = info[i], info[i + 1]
        i += 2
        if fmt == 4:  # EIFMT_SVAL: u16 size, payload
            size = struct.unpack_from("<H", info, i)[0]
            if attr == attr_id and size >= 8:
                return struct.unpack_from("<II", info, i + 2)[1]
            i += 2 + size
        elif fmt == 3:  # EIFMT_HVAL: u16 value
            i += 2
        elif fmt == 2:  # EIFMT_BVAL: u8 value
            i += 1
    return None


def cubin_regs(blob: bytes) -> int:
    """Registers per thread of the (single) kernel in a cubin: its EIATTR_REGCOUNT (0x2f) record."""
    n = _nv_info(blob, 0x2F)
    if n is None:
        raise ValueError("no EIATTR_REGCOUNT record in the cubin")
    return n


def cubin_frame_bytes(blob: bytes) -> int:
    """Per-thread stack frame (EIATTR_FRAME_SIZE, 0x11): > 0 when registers spill to local memory."""
    return _nv_info(blob, 0x11) or 0


def cubin_static_shared(blob: bytes) -> int:
    return sum(
        len(v)
        for k, v in _elf_sections(blob).items()
        if k.startswith(".nv.shared.") and not k.startswith(".nv.shared.reserved")
    )


def cuda_ctas_per_sm(regs: int, shared: int, warps: int, lim: dict = SM90) -> tuple[int, str]:
    """(resident CTAs per SM, limiter) for one kernel (formula in the module docstring)."""
    regs_per_warp = 32 * (-(-regs // lim["reg_unit_per_thread"]) * lim["reg_unit_per_thread"])
    by_regs = (lim["regs_per_sm"] // regs_per_warp) // warps
    smem = -(-shared // lim["smem_unit"]) * lim["smem_unit"] + lim["smem_reserved"]
    by_smem = lim["smem_per_sm"] // smem if shared <= lim["smem_per_cta"] else 0
    by_warps = lim["max_warps"] // warps
    cands = [(lim["max_ctas"], "CTA limit"), (by_warps, "warps"), (by_regs, "registers"), (by_smem, "shared memory")]
    n, why = min(cands, key=lambda c: c[0])
    return n, why


def from_compiled(ck, target: str) -> Occupancy:
    """Occupancy of a ``triton.compile`` result for ``target`` (``sm_90a``, ``gfx942``, ...)."""
    warps = ck.metadata.num_warps
    if target.startswith("gfx"):
        asm = ck.asm["amdgcn"]
        vgpr = max(int(x) for x in re.findall(r"\.vgpr_count:\s*(\d+)", asm))
        spills = max([int(x) for x in re.findall(r"\.vgpr_spill_count:\s*(\d+)", asm)] or [0])
        waves = min(int(x) for x in re.findall(r";\s*Occupancy:\s*(\d+)", asm))
        lds = int(ck.metadata.shared)
        # a CTA of `warps` waves spreads over the CU's 4 SIMDs: CTAs/CU = 4 * waves / warps
        return Occupancy(target, vgpr, lds, warps, (4 * waves) // warps, "waves per SIMD (LLVM)", spills)
    blob = ck.asm["cubin"]
    regs = cubin_regs(blob)
    shared = int(ck.metadata.shared) + cubin_static_shared(blob)
    n, why = cuda_ctas_per_sm(regs, shared, warps)
    return Occupancy(target, regs, shared, warps, n, why, cubin_frame_bytes(blob))


__all__ = [
    "Occupancy",
    "SM90",
    "cubin_frame_bytes",
    "cubin_regs",
    "cubin_static_shared",
    "cuda_ctas_per_sm",
    "from_compiled",
]
