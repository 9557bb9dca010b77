"""The decode kernel compiled ahead of time for sm_90a / gfx942 (no GPU needed): pipelining,
vector loads, MMA instructions, registers and occupancy, read from the compiled code.

Compiles run in a subprocess: the interpreter tests set TRITON_INTERPRET=1 for this process.
"""

import json
import os
import subprocess
import sys

import pytest

from perfreport.pa.kernel.occupancy import SM90, cuda_ctas_per_sm
from perfreport.pa.kernel.partitions import CTAS_PER_SM

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


def _reports(cases):
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    env.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
    env["PYTHONPATH"] = os.pathsep.join([ROOT, env.get("PYTHONPATH", "")])
    r = subprocess.run(
        [sys.executable, "-c", _SCRIPT, json.dumps(cases)], capture_output=True, text=True, env=env, timeout=600
    )
    assert r.returncode == 0, r.stderr[-3000:]
    res = json.loads(r.stdout.strip().splitlines()[-1])
    if not res:
        pytest.skip("the installed triton lacks the backend for these targets")
    return res


@pytest.fixture(scope="module")
def sm90():
    return _reports(
        [
            ["sm_90a", dict(kv="bf16")],
            ["sm_90a", dict(kv="fp8", fp8_mma="f16")],
            ["sm_90a", dict(kv="fp8", fp8_mma="fp8")],
            ["sm_90a", dict(kv="bf16", layout="5D", v5=True)],
            ["sm_90a", dict(kv="fp8", fp8_mma="fp8", layout="5D", v5=True, scales="token")],
        ]
    )


def test_sm90_main_loop_keeps_copies_in_flight(sm90):
    """Block ids are loaded one tile ahead, so the pipeliner issues later tiles' cp.async copies
    before this tile is consumed: the loop's wait_group count is > 0 (it was 0: wait for all)."""
    for r in sm90:
        assert r["loop_waits"] and min(r["loop_waits"]) > 0, r
        if r["shape"].get("scales") == "token":  # + 64 fp32 scales per tile, in the MMA's column layout
            assert 16 in r["copy_bytes"], r
        else:
            assert r["copy_bytes"] == [16] and r["copies"] > 0, r  # K/V: 16-byte vector copies only


def test_sm90_occupancy_two_ctas_per_sm(sm90):
    """Registers (EIATTR_REGCOUNT of the cubin) and shared memory allow >= 2 CTAs per SM, the
    figure the partition planner assumes; no spills (no stack frame)."""
    for r in sm90:
        assert r["ctas_per_sm"] >= CTAS_PER_SM == 2, r
        assert r["spills"] == 0 and r["regs"] <= 255
        assert r["reduce_ctas_per_sm"] >= 8


def test_sm90_mma_instructions(sm90):
    bf16, f16, fp8 = sm90[0], sm90[1], sm90[2]
    assert bf16["mma"] == ["wgmma bf16"]
    assert f16["mma"] == ["wgmma f16"] and f16["fp8_cvt"] > 0  # e4m3 -> f16 in registers
    assert fp8["mma"] == ["wgmma e4m3"] and fp8["fp8_cvt"] == 0  # FP8 straight to the tensor cores


def test_gfx942_compiles_with_mfma_and_no_spills():
    res = _reports([["gfx942", dict(kv="bf16")], ["gfx942", dict(kv="fp8_fnuz", fp8_mma="fp8")]])
    bf16, fp8 = res
    assert bf16["mma"] == ["v_mfma_f32_32x32x8_bf16"] and bf16["spills"] == 0
    assert fp8["mma"] == ["v_mfma_f32_32x32x16_fp8_fp8"] and fp8["spills"] == 0
    assert "global_load_dwordx4" in bf16["loads"]  # 16-byte loads
    assert bf16["ctas_per_sm"] >= 2


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
