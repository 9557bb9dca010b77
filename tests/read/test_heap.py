"""perfreport/read/heap.py: malloc tuning is an opt-in (issue 23)."""

from __future__ import annotations

from perfreport.read import heap


def test_tune_does_nothing_until_enabled(monkeypatch):
    calls = []

    class Lib:
        def mallopt(self, *a):
            calls.append(a)

        malloc_trim = None

    monkeypatch.setattr(heap, "_libc", Lib())
    monkeypatch.setattr(heap, "_tuned", False)
    monkeypatch.setattr(heap, "_enabled", False)
    heap.tune()
    assert calls == [] and heap._tuned is False
    heap.enable()
    heap.tune()
    assert calls == [(heap.M_MMAP_THRESHOLD, heap.THRESHOLD), (heap.M_TRIM_THRESHOLD, heap.THRESHOLD)]
