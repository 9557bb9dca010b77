"""pa/bench/backends/flashinfer_backend.py: what it says when it cannot run (no flashinfer, no
NVIDIA GPU, scales that are not per tensor); planning and the call are checked against a fake
flashinfer in tests/pa/bench/test_backends.py."""

from __future__ import annotations

import sys
import types

import pytest
import torch

from perfreport.pa.bench.backends import Skip, SkipRow
from perfreport.pa.bench.backends.flashinfer_backend import PACKAGE, prepare
from tests.pa.bench.backends.kit import CPU, GPU, absent, case_and_inputs


def test_skips(monkeypatch):
    case, inp = case_and_inputs()
    absent(monkeypatch, "flashinfer")
    with pytest.raises(Skip, match="install the 'flashinfer-python' package to enable it"):
        prepare(inp, case, GPU)
    assert PACKAGE == "flashinfer-python"
    monkeypatch.setitem(sys.modules, "flashinfer", types.ModuleType("flashinfer"))
    with pytest.raises(Skip, match="flashinfer needs an NVIDIA GPU"):
        prepare(inp, case, CPU)
    monkeypatch.setattr(torch.version, "hip", "6.2")
    with pytest.raises(Skip, match="flashinfer needs an NVIDIA GPU"):
        prepare(inp, case, GPU)


def test_one_scale_per_tensor(monkeypatch):
    monkeypatch.setitem(sys.modules, "flashinfer", types.ModuleType("flashinfer"))
    monkeypatch.setattr(torch.version, "hip", None)
    case, inp = case_and_inputs()
    inp.k_scale = torch.ones(case.kv_heads + 1)
    with pytest.raises(SkipRow, match="one K and one V scale"):
        prepare(inp, case, GPU)
