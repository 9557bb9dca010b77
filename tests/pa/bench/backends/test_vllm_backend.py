"""pa/bench/backends/vllm_backend.py: what it says when it cannot run (no vllm, no GPU, no
unified_attention in any known module, Dk != Dv); the call itself is checked against a fake vllm
in tests/pa/bench/test_backends.py."""

from __future__ import annotations

import sys
import types

import pytest

from perfreport.pa.bench.backends import Skip, SkipRow
from perfreport.pa.bench.backends.vllm_backend import _MODULES, PACKAGE, prepare
from tests.pa.bench.backends.kit import CPU, GPU, absent, case_and_inputs


def test_skips(monkeypatch):
    case, inp = case_and_inputs()
    absent(monkeypatch, "vllm")
    with pytest.raises(Skip, match=f"install the '{PACKAGE}' package to enable it"):
        prepare(inp, case, GPU)
    monkeypatch.setitem(sys.modules, "vllm", types.ModuleType("vllm"))
    with pytest.raises(Skip, match="vllm kernels need a GPU"):
        prepare(inp, case, CPU)
    absent(monkeypatch, *_MODULES)
    with pytest.raises(Skip, match="unified_attention was not found"):
        prepare(inp, case, GPU)


def test_dk_must_equal_dv(monkeypatch):
    monkeypatch.setitem(sys.modules, "vllm", types.ModuleType("vllm"))
    mod = types.ModuleType(_MODULES[0])
    mod.unified_attention = lambda **kw: None
    monkeypatch.setitem(sys.modules, _MODULES[0], mod)
    case, inp = case_and_inputs(head_dim=64, v_head_dim=32)
    with pytest.raises(SkipRow, match="needs Dk == Dv"):
        prepare(inp, case, GPU)
    case, inp = case_and_inputs(q_len=3)
    assert prepare(inp, case, GPU).note == "unverified adapter; one token per program (KV read 3x)"
