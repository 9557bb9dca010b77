"""pa/bench/backends/aiter_backend.py: what it says when it cannot run (no aiter, not ROCm, no
paged_attention_v1, Dk != Dv) and the positional call it makes, against a fake aiter."""

from __future__ import annotations

import sys
import types

import pytest
import torch

from perfreport.pa.bench.backends import Skip, SkipRow
from perfreport.pa.bench.backends.aiter_backend import PACKAGE, prepare
from tests.pa.bench.backends.kit import GPU, absent, case_and_inputs


def test_skips(monkeypatch):
    case, inp = case_and_inputs()
    absent(monkeypatch, "aiter")
    with pytest.raises(Skip, match=f"install the '{PACKAGE}' package to enable it"):
        prepare(inp, case, GPU)
    monkeypatch.setitem(sys.modules, "aiter", types.ModuleType("aiter"))
    monkeypatch.setattr(torch.version, "hip", None)
    with pytest.raises(Skip, match="aiter runs on AMD GPUs only"):
        prepare(inp, case, GPU)
    monkeypatch.setattr(torch.version, "hip", "6.2")
    with pytest.raises(Skip, match="this aiter has no paged_attention_v1"):
        prepare(inp, case, GPU)


def test_dk_must_equal_dv(monkeypatch):
    fake = types.ModuleType("aiter")
    fake.paged_attention_v1 = lambda *a: None
    monkeypatch.setitem(sys.modules, "aiter", fake)
    monkeypatch.setattr(torch.version, "hip", "6.2")
    case, inp = case_and_inputs(head_dim=64, v_head_dim=32)
    with pytest.raises(SkipRow, match="needs Dk == Dv"):
        prepare(inp, case, GPU)


def test_the_positional_call(monkeypatch):
    calls = []
    fake = types.ModuleType("aiter")
    fake.paged_attention_v1 = lambda *a: calls.append(a)
    monkeypatch.setitem(sys.modules, "aiter", fake)
    monkeypatch.setattr(torch.version, "hip", "6.2")
    case, inp = case_and_inputs(q_len=2)
    p = prepare(inp, case, GPU)
    assert (p.partitions, p.note) == ("1", "unverified adapter")  # ceil(40 / 256)
    assert p.run() is p.out
    (a,) = calls
    assert a[0] is p.out and a[2] is inp.query and a[5] == inp.scale and a[6] is inp.block_tables
    assert a[7].tolist() == [0, 2, 4]  # cumulative query starts
    assert (a[9], a[11], a[12], a[17], a[18]) == (40, "auto", "NHD", 256, 2)
    assert a[1].numel() == 4 * 4 * 1 * (32 + 2) * 4  # rows x heads x partitions x (Dv + 2) x 4 bytes
