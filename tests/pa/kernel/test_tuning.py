"""Tile size / depth per target, and the planner reading CTAs/SM from the compiled kernel (CPU only:
the compile is stood in for by a compiled-kernel object whose amdgcn text carries LLVM's figures)."""

import os
from types import SimpleNamespace

import pytest
import torch

if torch.cuda.is_available():
    pytest.skip("CPU interpreter tests; a GPU is present", allow_module_level=True)
os.environ["TRITON_INTERPRET"] = "1"

from perfreport.pa.kernel import launch as L  # noqa: E402
from perfreport.pa.kernel import tuning as T  # noqa: E402
from perfreport.pa.kernel.cache import build_inputs  # noqa: E402
from perfreport.pa.kernel.host import decode_partitions  # noqa: E402


def _compiled(waves_per_simd: int, warps: int = 4):
    """What triton.compile returns, as far as occupancy.from_compiled reads it (AMD form)."""
    asm = f".vgpr_count: 200\n.vgpr_spill_count: 0\n; Occupancy: {waves_per_simd}\n"
    return SimpleNamespace(asm={"amdgcn": asm}, metadata=SimpleNamespace(num_warps=warps, shared=20480))


def test_family_and_defaults():
    assert T.family("sm_90a") == T.family("sm_90") == "sm_90" and T.family("gfx942") == T.family("gfx950") == "gfx9"
    assert T.default_config("sm_90a", "bf16", "bf16") == T.DEFAULTS["sm_90", "bf16", "bf16"]
    assert T.default_config("sm_80", "fp8", "f16") == T.FALLBACK["f16"]  # an unsearched target
    assert T.device_target(torch.device("cpu")) == "cpu"
    for (fam, kv, mma), (bn, st) in T.DEFAULTS.items():
        assert bn in (16, 32, 64, 128) and 2 <= st <= 5, (fam, kv, mma)


def test_ctas_per_sm_reads_the_compiled_kernel_once(monkeypatch):
    calls = []

    def warmup(args, cfg, num_warps, num_stages):
        calls.append((num_warps, num_stages))
        return _compiled(waves_per_simd=2)

    monkeypatch.setattr(L, "warmup", warmup)
    monkeypatch.setattr(T, "_OCC", {})
    cfg = {"BLOCK_N": 32, "MMA": 0}
    dev = SimpleNamespace(index=0)
    # 4 SIMDs x 2 waves per SIMD / 4 waves per CTA = 2 CTAs per CU
    assert T.ctas_per_sm({}, cfg, 4, 3, dev, "gfx942") == 2
    assert T.ctas_per_sm({}, cfg, 4, 3, dev, "gfx942") == 2 and calls == [(4, 3)]  # cached per config
    assert T.ctas_per_sm({}, dict(cfg, BLOCK_N=64), 4, 3, dev, "gfx942") == 2 and len(calls) == 2
    assert T.ctas_per_sm({}, cfg, 4, 3, dev, "cpu") == T.INTERPRET_CTAS  # nothing compiled


@pytest.mark.parametrize("waves,parts", [(2, 4), (1, 2)])
def test_auto_partitions_follow_the_compiled_occupancy(monkeypatch, waves, parts):
    """4 sequences x 1 KV head on the interpreter's 8 'SMs': 2 CTAs/SM -> a wave of 16 CTAs -> P = 4;
    a kernel compiled to 1 CTA/SM -> a wave of 8 -> P = 2 (the old planner assumed 2 whatever the
    compile said)."""
    monkeypatch.setattr(T, "device_target", lambda dev: "gfx942")
    monkeypatch.setattr(T, "_OCC", {})
    seen = []

    def warmup(args, cfg, num_warps, num_stages):
        seen.append((cfg["BLOCK_N"], num_stages, args["out"], args["acc"]))
        return _compiled(waves)

    monkeypatch.setattr(L, "warmup", warmup)
    inp = build_inputs([4096] * 4, q_len=1, q_heads=2, kv_heads=1, head_dim=32, v_head_dim=32, page_size=16, seed=1)
    a = (inp.query, inp.key_cache, inp.value_cache, inp.block_tables, inp.context_lens)
    assert decode_partitions(*a, **inp.kwargs()) == parts
    bn, st = T.DEFAULTS["gfx9", "bf16", "bf16"]
    assert seen == [(bn, st, torch.bfloat16, torch.float32)]  # the default config, dtypes for unallocated buffers
