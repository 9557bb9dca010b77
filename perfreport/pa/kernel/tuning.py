"""Tile size and pipelining depth per target, and the occupancy the partition planner uses.

``DEFAULTS`` maps (target family, KV dtype, MMA path) to (block_n, num_stages): the config with
the most K/V bytes in flight per CTA, ``(num_stages - 1) x block_n x (Dk + Dv) x bytes`` (ties:
more CTAs/SM, then fewer registers), among those that compile at the headline shape (batch 32,
q 4, 16:1 GQA, Dk 192, Dv 128, page 64, NHD) to at least 2 CTAs per SM (or the most any config
reaches, on targets where none reaches 2) with no spills and, on NVIDIA, a main loop that waits
with N > 0; the winner must also hold (no spills, as many CTAs) in the layout with the most
registers, 5D with vectorized V and per-token K and V scales. So the default is the deepest
pipeline that still keeps 2 CTAs on an SM in every layout. It is the
output of :func:`search` (``python -m perfreport.pa.kernel.tuning``), read from the
ahead-of-time compiles with the installed triton (3.9 here; the GPU image has 3.6: the GPU run
re-reads the occupancy from the kernel it compiles, below). Table and figures: docs/bench-pa.md.

The planner (:mod:`perfreport.pa.kernel.partitions`) needs resident CTAs per SM before the launch
that uses them. :func:`ctas_per_sm` compiles (or finds in triton's cache) the very kernel the call
will launch, through ``JITFunction.warmup`` with the call's constexprs and strides, and reads
its registers and shared memory (:mod:`perfreport.pa.kernel.occupancy`); results are kept per
(device, config). Under the interpreter nothing is compiled: :data:`INTERPRET_CTAS`.
"""

from __future__ import annotations

import json
import sys

from perfreport.pa.kernel.configs import DEFAULTS, FALLBACK, default_config, family

INTERPRET_CTAS = 2  # the interpreter has no occupancy; any value plans the same partitions there
SEARCH = dict(block_n=(32, 64), num_stages=(2, 3, 4, 5))
HEADLINE = dict(dk=192, dv=128, q_len=4, group=16, page=64)
_OCC: dict = {}


def device_target(device) -> str:
    """The compile target of a torch device: ``sm_90``, ``gfx942``, or ``cpu``."""
    import torch

    if device.type != "cuda":
        return "cpu"
    idx = device.index if device.index is not None else torch.cuda.current_device()
    props = torch.cuda.get_device_properties(idx)
    if torch.version.hip:
        return str(getattr(props, "gcnArchName", "gfx")).split(":")[0]
    return f"sm_{props.major}{props.minor}"


def ctas_per_sm(args: dict, cfg: dict, num_warps: int, num_stages: int, device, target: str) -> int:
    """Resident CTAs per SM (CU) of the partition kernel this call launches, read from its compile."""
    if target == "cpu":
        return INTERPRET_CTAS
    key = (target, getattr(device, "index", None), num_warps, num_stages, tuple(sorted(cfg.items())))
    if key not in _OCC:
        from perfreport.pa.kernel.launch import warmup
        from perfreport.pa.kernel.occupancy import from_compiled

        ck = warmup(args, cfg, num_warps, num_stages)
        _OCC[key] = max(1, from_compiled(ck, target).ctas_per_sm)
    return _OCC[key]


def _in_flight(block_n: int, stages: int, kv_bytes: int) -> int:
    """K/V bytes one CTA has in flight: the tiles beyond the one being consumed."""
    return (stages - 1) * block_n * (HEADLINE["dk"] + HEADLINE["dv"]) * kv_bytes


def search(target: str, kv: str, mma: str, log=lambda r: None) -> tuple[int, int]:
    """The (block_n, num_stages) of :data:`DEFAULTS` for one path, from AOT compiles (rule above)."""
    from perfreport.pa.kernel.compiled_checks import report

    kv_arg = "fp8_fnuz" if (kv == "fp8" and target == "gfx942") else kv
    found = []
    for bn in SEARCH["block_n"]:
        for st in SEARCH["num_stages"]:
            try:
                r = report(
                    target,
                    **dict(HEADLINE, kv=kv_arg, fp8_mma=mma if kv == "fp8" else "f16"),
                    block_n=bn,
                    num_stages=st,
                )
            except Exception as exc:  # does not compile (shared memory, registers): not a candidate
                log(dict(block_n=bn, num_stages=st, error=f"{type(exc).__name__}: {str(exc)[:120]}"))
                continue
            log(
                dict(
                    block_n=bn,
                    num_stages=st,
                    **{k: r.get(k) for k in ("regs", "shared", "ctas_per_sm", "spills", "loop_waits")},
                )
            )
            nvidia_ok = target.startswith("gfx") or (r["loop_waits"] and min(r["loop_waits"]) > 0)
            if r["spills"] == 0 and nvidia_ok:
                found.append((r, bn, st))
    if not found:
        raise RuntimeError(f"no config compiles without spills for {target} {kv} {mma}")
    need = min(2, max(r["ctas_per_sm"] for r, _, _ in found))
    ok = [(r, bn, st) for r, bn, st in found if r["ctas_per_sm"] >= need]
    kv_bytes = 2 if kv == "bf16" else 1
    ok.sort(key=lambda c: (_in_flight(c[1], c[2], kv_bytes), c[0]["ctas_per_sm"], -c[0]["regs"]), reverse=True)
    worst = dict(HEADLINE, layout="5D", v5=True, kv=kv_arg, fp8_mma=mma if kv == "fp8" else "f16")
    if kv == "fp8":
        worst["scales"] = "token"  # per-token K and V scales: the most registers
    for r, bn, st in ok:  # the best that also holds in the worst layout (5D, vectorized V)
        w = report(target, **worst, block_n=bn, num_stages=st)
        log(
            dict(block_n=bn, num_stages=st, worst_case=True, **{k: w.get(k) for k in ("regs", "ctas_per_sm", "spills")})
        )
        if w["spills"] == 0 and w["ctas_per_sm"] >= need:
            return bn, st
    raise RuntimeError(f"no config holds in the 5D layout for {target} {kv} {mma}")


__all__ = [
    "DEFAULTS",
    "FALLBACK",
    "INTERPRET_CTAS",
    "ctas_per_sm",
    "default_config",
    "device_target",
    "family",
    "search",
]


if __name__ == "__main__":  # pragma: no cover - regenerates DEFAULTS (minutes: 8 compiles per path)
    for tgt in sys.argv[1:] or ["sm_90a", "gfx942"]:
        for kv, mma in (("bf16", "bf16"), ("fp8", "f16"), ("fp8", "fp8")):
            bn, st = search(
                tgt, kv, mma, log=lambda r: print(json.dumps(dict(target=tgt, kv=kv, mma=mma, **r)), flush=True)
            )
            print(f"({family(tgt)!r}, {kv!r}, {mma!r}): ({bn}, {st}),", flush=True)
