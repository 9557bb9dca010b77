"""What the compiled decode kernel does, read from its PTX / amdgcn without a GPU.

``report(target, **shape)`` AOT-compiles both kernels (:func:`paged_attention_launch.aot_compile`)
and returns a JSON-able dict: the wait counts inside the main loop, the load widths, the MMA
instructions, and the occupancy (:mod:`perfreport.pa.kernel.occupancy`). Run as a script it prints
the report of the headline shape for sm_90a, gfx942 and gfx950 (the tables in docs/bench-pa.md):

    python -m perfreport.pa.kernel.compiled_checks

The main loop is the longest span between a label and a later branch back to it.
NVIDIA: ``cp.async.wait_group N`` in the loop means "wait until at most N copy groups are
pending": N > 0 means later tiles' copies stay in flight while this tile is consumed (N = 0
waits for everything: no overlap). AMD: ``s_waitcnt vmcnt(N)`` is the equivalent for vector
memory loads (N outstanding loads may remain).
"""

from __future__ import annotations

import json
import re
import sys


def main_loop(asm: str, label_re: str, branch_re: str) -> str:
    """Text of the longest backward-branch loop of an assembly listing ('' when none)."""
    lines = asm.splitlines()
    where = {}
    for i, ln in enumerate(lines):
        m = re.match(label_re, ln.strip())
        if m:
            where[m.group(1)] = i
    best = (0, 0)
    for i, ln in enumerate(lines):
        m = re.search(branch_re, ln)
        if m and m.group(1) in where and where[m.group(1)] < i:
            if i - where[m.group(1)] > best[1] - best[0]:
                best = (where[m.group(1)], i)
    return "\n".join(lines[best[0] : best[1] + 1])


def ptx_loop_waits(ptx: str) -> list[int]:
    body = main_loop(ptx, r"^(\$L__BB\d+_\d+):", r"\bbra(?:\.uni)?\s+(\$L__BB\d+_\d+);")
    return [int(x) for x in re.findall(r"cp\.async\.wait_group\s+(\d+)", body)]


def amdgcn_loop_waits(asm: str) -> list[int]:
    body = main_loop(asm, r"^(\.LBB\d+_\d+):", r"\bs_c?branch\w*\s+(\.LBB\d+_\d+)")
    return [int(x) for x in re.findall(r"s_waitcnt\s+vmcnt\((\d+)\)", body)]


def ptx_loop_copies(ptx: str) -> dict[int, int]:
    """{bytes: count} of the ``cp.async`` copies inside the main loop (one thread's, per tile)."""
    body = main_loop(ptx, r"^(\$L__BB\d+_\d+):", r"\bbra(?:\.uni)?\s+(\$L__BB\d+_\d+);")
    out: dict[int, int] = {}
    for m in re.findall(
        r"cp\.async\.c[ag]\.shared\.global(?:\.\w+)*\s+\[[^\]]+\],\s*\[[^\]]+\],\s*(0x[0-9a-f]+|\d+)", body
    ):
        n = int(m, 0)
        out[n] = out.get(n, 0) + 1
    return out


def ptx_loop_global_loads(ptx: str) -> dict[str, int]:
    """{instruction: count} of the synchronous ``ld.global`` loads inside the main loop."""
    body = main_loop(ptx, r"^(\$L__BB\d+_\d+):", r"\bbra(?:\.uni)?\s+(\$L__BB\d+_\d+);")
    out: dict[str, int] = {}
    for m in re.findall(r"\b(ld\.global(?:\.\w+)*)\s", body):
        out[m] = out.get(m, 0) + 1
    return out


def kv_tile_bytes_per_thread(kw: dict, block_n: int, warps: int) -> float:
    """K and V bytes one thread copies per tile: block_n x (Dk + Dv) x element size / threads."""
    elt = 2 if kw.get("kv", "bf16") == "bf16" else 1
    return block_n * (kw["dk"] + kw["dv"]) * elt / (warps * 32)


def report(target: str, **kw) -> dict:
    from perfreport.pa.kernel.launch import aot_compile
    from perfreport.pa.kernel.occupancy import from_compiled
    from perfreport.pa.kernel.configs import default_config

    main, red = aot_compile(target, **kw)
    occ, rocc = from_compiled(main, target), from_compiled(red, target)
    fp8 = kw.get("kv", "bf16") != "bf16"
    d_bn, d_st = default_config(target, "fp8" if fp8 else "bf16", kw.get("fp8_mma", "f16") if fp8 else "bf16")
    out = dict(
        target=target,
        shape=kw,
        block_n=kw.get("block_n") or d_bn,
        num_stages=kw.get("num_stages") or d_st,
        regs=occ.regs,
        shared=occ.shared,
        warps=occ.warps,
        ctas_per_sm=occ.ctas_per_sm,
        limiter=occ.limiter,
        spills=occ.spills,
        reduce_regs=rocc.regs,
        reduce_ctas_per_sm=rocc.ctas_per_sm,
    )
    if target.startswith("gfx"):
        asm = main.asm["amdgcn"]
        out.update(
            loop_waits=amdgcn_loop_waits(asm),
            mma=sorted(set(re.findall(r"v_mfma_\w+", asm))),
            loads=sorted(set(re.findall(r"(?:buffer|global)_load_(?:lds_)?\w+", asm))),
        )
    else:
        ptx = main.asm["ptx"]
        copies = re.findall(r"cp\.async\.c[ag]\.shared\.global[^;]*", ptx)
        out.update(
            loop_waits=ptx_loop_waits(ptx),
            copy_bytes=sorted({int(m, 0) for m in re.findall(r",\s*(0x[0-9a-f]+|\d+)\s*(?:,|$)", "\n".join(copies))}),
            copies=len(copies),
            loop_copies=ptx_loop_copies(ptx),
            loop_loads=ptx_loop_global_loads(ptx),
            kv_bytes_per_thread=kv_tile_bytes_per_thread(kw, out["block_n"], occ.warps),
            mma=sorted({"wgmma " + t for t in re.findall(r"wgmma\.mma_async\S*\.(e4m3|bf16|f16)", ptx)}),
            fp8_cvt=ptx.count("cvt.rn.f16x2.e4m3x2"),
        )
    return out


HEADLINE = dict(dk=192, dv=128, q_len=4, group=16, page=64)


LAYOUTS = (dict(layout="NHD"), dict(layout="5D"), dict(layout="5D", v5=True))


def cases(targets=(("sm_90a", "fp8"), ("gfx942", "fp8_fnuz"), ("gfx950", "fp8"))):
    """Every (target, shape): the headline shape in each layout with each KV dtype and MMA path."""
    for tgt, fp8 in targets:
        for lay in LAYOUTS:
            yield tgt, dict(HEADLINE, kv="bf16", **lay)
            yield tgt, dict(HEADLINE, kv=fp8, fp8_mma="f16", **lay)
            yield tgt, dict(HEADLINE, kv=fp8, fp8_mma="fp8", **lay)


if __name__ == "__main__":  # pragma: no cover - documentation helper
    for tgt, kw in cases():
        try:
            print(json.dumps(report(tgt, **kw)))
        except Exception as exc:
            print(json.dumps(dict(target=tgt, shape=kw, error=f"{type(exc).__name__}: {exc}"[:300])))
        sys.stdout.flush()
