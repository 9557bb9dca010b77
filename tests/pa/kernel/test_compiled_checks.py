"""The decode kernel compiled ahead of time for sm_90a / gfx942 (no GPU needed): pipelining,
copy widths, MMA instructions, registers, spills and occupancy, read from the compiled code, for
every layout (NHD, 5D, 5D with vectorized V) and every KV path (BF16, FP8 via f16, FP8 MMAs) at
the headline shape with each path's default (block_n, num_stages) (perfreport/pa/kernel/tuning.py).

Compiles run in a subprocess: the interpreter tests set TRITON_INTERPRET=1 for this process.
"""

import json
import os
import subprocess
import sys

import pytest

from perfreport.pa.kernel.occupancy import SM90, cuda_ctas_per_sm
from perfreport.pa.kernel.partitions import CTAS_PER_SM
from perfreport.pa.kernel.tuning import DEFAULTS

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

_SCRIPT = r"""
import json, sys
import triton.backends as tb
from perfreport.pa.kernel.compiled_checks import HEADLINE, report
want = json.loads(sys.argv[1])
out = []
for tgt, kw in want:
    if ("amd" if tgt.startswith("gfx") else "nvidia") in tb.backends:
        out.append(report(tgt, **dict(HEADLINE, **kw)))
print(json.dumps(out))
"""
LAYOUTS = [dict(layout="NHD"), dict(layout="5D"), dict(layout="5D", v5=True)]
PATHS = [dict(kv="bf16"), dict(kv="fp8", fp8_mma="f16"), dict(kv="fp8", fp8_mma="fp8")]


def _reports(cases):
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    env.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
    env["PYTHONPATH"] = os.pathsep.join([ROOT, env.get("PYTHONPATH", "")])
    r = subprocess.run(
        [sys.executable, "-c", _SCRIPT, json.dumps(cases)], capture_output=True, text=True, env=env, timeout=1500
    )
    assert r.returncode == 0, r.stderr[-3000:]
    res = json.loads(r.stdout.strip().splitlines()[-1])
    if not res:
        pytest.skip("the installed triton lacks the backend for these targets")
    return res


@pytest.fixture(scope="module")
def sm90():
    cases = [["sm_90a", dict(p, **lay)] for lay in LAYOUTS for p in PATHS]
    cases += [  # per-token scales (K and V), and K per head with V per token, on the 5DV layout
        ["sm_90a", dict(kv="fp8", fp8_mma="fp8", layout="5D", v5=True, scales="token")],
        ["sm_90a", dict(kv="fp8", fp8_mma="f16", layout="5D", v5=True, scales="head", v_scales="token")],
    ]
    return _reports(cases)


def _label(r):
    s = r["shape"]
    return f"{s['kv']} {s.get('fp8_mma', '')} {s['layout']}{'V' if s.get('v5') else ''} {s.get('scales', '')}"


def test_sm90_kv_tiles_arrive_by_16_byte_async_copies(sm90):
    """In the main loop one thread's 16-byte cp.async copies carry at least its share of the K and
    V tile (block_n x (Dk + Dv) x bytes / 128 threads), and no K/V element comes by a synchronous
    load: the loop's only ld.global are 32-bit (block ids of the next tile, fp32 scales). The
    vectorized-5D V used to arrive as 32 ld.global.b16 per thread (a runtime Dv stride of 8)."""
    for r in sm90:
        assert r["loop_copies"].get("16", 0) * 16 >= r["kv_bytes_per_thread"] > 0, (_label(r), r)
        assert set(r["loop_loads"]) <= {"ld.global.b32", "ld.global.nc.b32"}, (_label(r), r["loop_loads"])
        assert r["copy_bytes"][-1] == 16


def test_sm90_main_loop_keeps_copies_in_flight(sm90):
    """Block ids are loaded one tile ahead, so the pipeliner issues later tiles' cp.async copies
    before this tile is consumed: the loop's wait_group count is > 0 (0 = wait for all)."""
    for r in sm90:
        assert r["loop_waits"] and min(r["loop_waits"]) > 0, (_label(r), r)


def test_sm90_no_spills_and_two_ctas_per_sm(sm90):
    """Registers (EIATTR_REGCOUNT) and shared memory allow >= 2 CTAs per SM at each path's default
    depth, in every layout; no stack frame (no spills)."""
    for r in sm90:
        assert r["spills"] == 0 and r["regs"] <= 255, (_label(r), r)
        assert r["ctas_per_sm"] >= CTAS_PER_SM == 2, (_label(r), r)
        assert r["reduce_ctas_per_sm"] >= 8


def test_sm90_mma_instructions(sm90):
    for r in sm90[:9]:
        s = r["shape"]
        if s["kv"] == "bf16":
            assert r["mma"] == ["wgmma bf16"]
        elif s["fp8_mma"] == "f16":
            assert r["mma"] == ["wgmma f16"] and r["fp8_cvt"] > 0  # e4m3 -> f16 in registers
        else:
            assert r["mma"] == ["wgmma e4m3"] and r["fp8_cvt"] == 0  # FP8 straight to the tensor cores


def test_sm90_defaults_are_the_deepest_two_cta_configs():
    """Each sm_90 default is at least as deep as what still compiles to 2 CTAs/SM in every layout:
    one stage more drops below 2 CTAs/SM (or spills) at the headline shape in the layout with the
    most registers and shared memory (5D with vectorized V; per-token K and V scales on FP8)."""
    cases = []
    for (fam, kv, mma), (bn, st) in sorted(DEFAULTS.items()):
        if fam == "sm_90":
            kw = dict(kv=kv, block_n=bn, num_stages=st + 1, layout="5D", v5=True)
            if kv == "fp8":
                kw.update(fp8_mma=mma, scales="token")
            cases.append(["sm_90a", kw])
    for r in _reports(cases):
        assert r["ctas_per_sm"] < 2 or r["spills"] > 0, r


def test_gfx942_compiles_with_mfma_16_byte_loads_and_no_spills():
    res = _reports(
        [["gfx942", dict(kv="bf16", **lay)] for lay in LAYOUTS] + [["gfx942", dict(kv="fp8_fnuz", fp8_mma="fp8")]]
    )
    for r in res[:3]:
        assert r["mma"] == ["v_mfma_f32_32x32x8_bf16"] and r["spills"] == 0, r
        assert "global_load_dwordx4" in r["loads"], r  # 16-byte loads
    # NHD: 238 VGPRs, 2 waves/SIMD = 2 CTAs/CU; the 5D layouts need 258-259 VGPRs: 1 wave, 1 CTA/CU
    # (measured, not a target: the planner reads it from the compile and sizes the partitions to it)
    assert res[0]["ctas_per_sm"] >= 2 and min(r["ctas_per_sm"] for r in res[:3]) >= 1
    assert res[3]["mma"] == ["v_mfma_f32_32x32x16_fp8_fp8"] and res[3]["spills"] == 0


def test_occupancy_formula_by_hand():
    # 134 regs -> 136 (unit 8) x 32 lanes = 4352 per warp; 65536 // 4352 = 15 warps; // 4 = 3 CTAs.
    # shared 87,040 B -> 87,040 (multiple of 128) + 1,024 reserved = 88,064; 233,472 // 88,064 = 2.
    assert cuda_ctas_per_sm(134, 87040, 4) == (2, "shared memory")
    # 154 regs x 8 warps: 160 x 32 = 5120 per warp; 65536 // 5120 = 12 warps; // 8 = 1 CTA (the old kernel)
    assert cuda_ctas_per_sm(154, 61440, 8) == (1, "registers")
    # a tiny kernel: 32 regs, no shared, 1 warp -> 64 warps // 1 = 64, capped at 32 CTAs
    assert cuda_ctas_per_sm(32, 0, 1) == (32, "CTA limit")
    assert cuda_ctas_per_sm(32, 300 * 1024, 4)[0] == 0  # over 227 KB: cannot launch
    assert SM90["smem_per_sm"] == 233472
