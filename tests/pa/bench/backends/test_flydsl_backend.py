"""pa/bench/backends/flydsl_backend.py: what it says when it cannot run (no flydsl, not ROCm, no
pa_decode_tile in any known module, BF16 KV); the call by argument name is checked against a fake
in tests/pa/bench/test_backends.py."""

from __future__ import annotations

import sys
import types

import pytest
import torch

from perfreport.pa.bench.backends import Skip, SkipRow
from perfreport.pa.bench.backends.flydsl_backend import _MODULES, PACKAGE, prepare
from tests.pa.bench.backends.kit import GPU, absent, case_and_inputs


def test_skips(monkeypatch):
    case, inp = case_and_inputs()
    absent(monkeypatch, "flydsl")
    with pytest.raises(Skip, match=f"install the '{PACKAGE}' package to enable it"):
        prepare(inp, case, GPU)
    monkeypatch.setitem(sys.modules, "flydsl", types.ModuleType("flydsl"))
    monkeypatch.setattr(torch.version, "hip", None)
    with pytest.raises(Skip, match="flydsl runs on AMD GPUs only"):
        prepare(inp, case, GPU)
    monkeypatch.setattr(torch.version, "hip", "6.2")
    absent(monkeypatch, *_MODULES)
    with pytest.raises(Skip, match="pa_decode_tile was not found"):
        prepare(inp, case, GPU)


def test_bf16_kv_is_a_skipped_row(monkeypatch):
    monkeypatch.setitem(sys.modules, "flydsl", types.ModuleType("flydsl"))
    monkeypatch.setattr(torch.version, "hip", "6.2")
    mod = types.ModuleType(_MODULES[0])
    mod.pa_decode_tile = lambda **kw: None
    monkeypatch.setitem(sys.modules, _MODULES[0], mod)
    case, inp = case_and_inputs(kv_dtype="bf16")
    with pytest.raises(SkipRow, match="takes FP8 KV caches only"):
        prepare(inp, case, GPU)
