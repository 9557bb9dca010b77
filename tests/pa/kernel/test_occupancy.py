"""pa/kernel/occupancy.py: registers and shared memory read from a cubin's ELF sections, and
resident CTAs per SM by the sm_90 rules, worked by hand; the AMD path reads LLVM's notes."""

from __future__ import annotations

import struct
from types import SimpleNamespace

import pytest

from perfreport.pa.kernel.occupancy import (
    cubin_frame_bytes,
    cubin_regs,
    cubin_static_shared,
    cuda_ctas_per_sm,
    from_compiled,
)


def _cubin(regs=134, frame=None, static_shared=512) -> bytes:
    """A minimal 64-bit ELF with the sections the reader looks at (.nv.info, .nv.shared.<kernel>)."""
    info = bytes([3, 0x12]) + struct.pack("<H", 7)  # an EIFMT_HVAL record to skip
    info += bytes([4, 0x2F]) + struct.pack("<HII", 8, 0, regs)  # EIATTR_REGCOUNT
    if frame is not None:
        info += bytes([4, 0x11]) + struct.pack("<HII", 8, 0, frame)  # EIATTR_FRAME_SIZE
    names = b"\0.shstrtab\0.nv.info\0.nv.shared.kern\0.nv.shared.reserved.0\0"
    secs = [  # (name offset, type, data or NOBITS size)
        (0, 0, b""),
        (1, 3, names),
        (11, 0x70000000, info),
        (20, 8, static_shared),
        (36, 8, 4096),  # reserved shared: not the kernel's
    ]
    body, offsets = b"", []
    for _, _, data in secs:
        offsets.append(64 + len(body))
        body += data if isinstance(data, bytes) else b""
    shoff = 64 + len(body)
    head = b"\x7fELF" + bytes([2, 1, 1, 0]) + b"\0" * 8
    head += struct.pack("<HHIQQQIHHHHHH", 1, 190, 1, 0, 0, shoff, 0, 64, 0, 0, 64, len(secs), 1)
    shdrs = b"".join(
        struct.pack("<IIQQQQIIQQ", n, t, 0, 0, off, len(d) if isinstance(d, bytes) else d, 0, 0, 1, 0)
        for (n, t, d), off in zip(secs, offsets)
    )
    return head + body + shdrs


def test_the_cubin_records():
    blob = _cubin(regs=134, frame=16, static_shared=512)
    assert (cubin_regs(blob), cubin_frame_bytes(blob), cubin_static_shared(blob)) == (134, 16, 512)
    assert cubin_frame_bytes(_cubin(frame=None)) == 0
    with pytest.raises(ValueError, match="not a 64-bit ELF cubin"):
        cubin_regs(b"\x7fELF\x01" + b"\0" * 60)


def test_ctas_per_sm_by_hand():
    # 134 regs -> 136 per thread, 4,352 per warp: 65,536 // 4,352 = 15 warps -> 3 CTAs of 4 warps;
    # shared 107,520 B + 1 KB reserved = 108,544: 233,472 // 108,544 = 2 CTAs (configs.py's 2 CTAs)
    assert cuda_ctas_per_sm(134, 107_520, 4) == (2, "shared memory")
    assert cuda_ctas_per_sm(255, 0, 4) == (2, "registers")  # 256 per thread: 8,192 per warp, 8 warps
    assert cuda_ctas_per_sm(32, 0, 16) == (4, "warps")
    assert cuda_ctas_per_sm(16, 0, 1) == (32, "CTA limit")
    assert cuda_ctas_per_sm(32, 228 * 1024, 4)[0] == 0  # above 227 KB a CTA cannot launch


def test_from_compiled_nvidia_and_amd():
    nv = SimpleNamespace(metadata=SimpleNamespace(num_warps=4, shared=107_008), asm={"cubin": _cubin(134, None, 512)})
    o = from_compiled(nv, "sm_90a")
    assert (o.regs, o.shared, o.warps, o.ctas_per_sm, o.limiter, o.spills) == (134, 107_520, 4, 2, "shared memory", 0)
    asm = ".vgpr_count: 238\n.vgpr_count: 120\n.vgpr_spill_count: 0\n; Occupancy: 2\n; Occupancy: 3\n"
    amd = SimpleNamespace(metadata=SimpleNamespace(num_warps=4, shared=32_768), asm={"amdgcn": asm})
    o = from_compiled(amd, "gfx942")
    assert (o.regs, o.shared, o.ctas_per_sm, o.limiter) == (238, 32_768, 2, "waves per SIMD (LLVM)")  # 4 SIMDs x 2 / 4
