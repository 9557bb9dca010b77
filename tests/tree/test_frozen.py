"""perfreport.tree.frozen: the records frozen for the passes and tables, thawed before release."""

from __future__ import annotations

import gc

import pytest

import perfreport.passes
from perfreport.pipeline import analyze
from perfreport.tree.frozen import records_frozen
from tests.conftest import FIX


def test_freezes_for_the_block_and_thaws_after_it_even_on_an_error():
    assert gc.get_freeze_count() == 0
    with records_frozen() as did:
        assert did and gc.get_freeze_count() > 0
    assert gc.get_freeze_count() == 0
    with pytest.raises(ValueError), records_frozen():
        raise ValueError
    assert gc.get_freeze_count() == 0


def test_leaves_an_existing_freeze_alone(monkeypatch):
    calls = []
    gc.freeze()
    try:
        # (the count itself drifts: a frozen object that dies leaves the permanent generation)
        monkeypatch.setattr(gc, "freeze", lambda: calls.append("freeze"))
        monkeypatch.setattr(gc, "unfreeze", lambda: calls.append("unfreeze"))
        with records_frozen() as did:
            assert not did
        assert calls == [] and gc.get_freeze_count() > 0  # neither frozen again nor thawed by us
    finally:
        monkeypatch.undo()
        gc.unfreeze()


def test_analyze_thaws_before_release_and_on_error(monkeypatch):
    seen = []
    real = perfreport.passes.run_passes

    def passes(tree):
        seen.append(gc.get_freeze_count())
        return real(tree)

    monkeypatch.setattr(perfreport.passes, "run_passes", passes)
    analyze(FIX / "h100_qwen_0.5b.json.gz")
    assert seen[0] > 0 and gc.get_freeze_count() == 0

    def boom(tree):
        raise RuntimeError("a pass failed")

    monkeypatch.setattr(perfreport.passes, "run_passes", boom)
    with pytest.raises(RuntimeError):
        analyze(FIX / "h100_qwen_0.5b.json.gz")
    assert gc.get_freeze_count() == 0
