"""read/heap.py: malloc thresholds pinned once per process when enabled (an opt-in), trim hands pages
back; a no-op without glibc."""

from __future__ import annotations

import os

import perfreport.read.heap as heap


class FakeLibc:
    def __init__(self):
        self.calls = []

    def mallopt(self, param, value):
        self.calls.append(("mallopt", param, value))
        return 1

    def malloc_trim(self, pad):
        self.calls.append(("malloc_trim", pad))
        return 1


def test_tune_pins_both_thresholds_once(monkeypatch):
    lib = FakeLibc()
    monkeypatch.setattr(heap, "_libc", lib)
    monkeypatch.setattr(heap, "_tuned", False)
    monkeypatch.setattr(heap, "_enabled", True)
    heap.tune()
    heap.tune()
    assert lib.calls == [("mallopt", -3, 1024 * 1024), ("mallopt", -1, 128 * 1024)]


def test_trim_asks_for_every_free_page(monkeypatch):
    lib = FakeLibc()
    monkeypatch.setattr(heap, "_libc", lib)
    monkeypatch.setattr(heap, "_big", True)
    heap.trim()
    heap.trim()
    assert lib.calls == [("malloc_trim", 0), ("malloc_trim", 0)]


def test_without_glibc_both_do_nothing(monkeypatch):
    monkeypatch.setattr(heap, "_libc", False)
    monkeypatch.setattr(heap, "_big", False)
    monkeypatch.setattr(heap, "_tuned", False)
    monkeypatch.setattr(heap, "_enabled", True)
    heap.tune()
    heap.trim()
    assert heap._tuned is True


def test_a_missing_libc_is_remembered_as_absent(monkeypatch):
    import ctypes

    def no_lib(name):
        raise OSError(name)

    monkeypatch.setattr(heap, "_libc", None)
    monkeypatch.setattr(ctypes, "CDLL", no_lib)
    assert heap._lib() is False
    assert heap._libc is False


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
    assert calls == [(heap.M_MMAP_THRESHOLD, heap.MMAP_THRESHOLD), (heap.M_TRIM_THRESHOLD, heap.THRESHOLD)]


def test_trim_waits_for_a_big_input(monkeypatch):
    lib = FakeLibc()
    monkeypatch.setattr(heap, "_libc", lib)
    monkeypatch.setattr(heap, "_big", False)
    monkeypatch.setattr(heap, "_tuned", False)
    monkeypatch.setattr(heap, "_enabled", False)
    heap.trim()
    assert lib.calls == []  # a small trace: nothing big was freed
    heap.tune()  # the reader: the input passed heap.BIG bytes (not enabled: no mallopt)
    heap.trim()
    assert lib.calls == [("malloc_trim", 0)]


def _analyze_with(monkeypatch, tmp_path, n_events):
    """(libc calls, trace size) of one analyze(tune_malloc=True) of ``n_events`` CPU ops."""
    from perfreport.pipeline import analyze
    from tests.kit import X, write_trace

    lib = FakeLibc()
    for k, v in (("_libc", lib), ("_big", False), ("_tuned", False), ("_enabled", False)):
        monkeypatch.setattr(heap, k, v)
    path = write_trace(tmp_path, [X("cpu_op", "aten::mm", i * 10.0, 5.0) for i in range(n_events)])
    analyze(path, tune_malloc=True)
    return lib.calls, os.path.getsize(path)


def test_the_reader_tunes_once_past_big(monkeypatch, tmp_path):
    monkeypatch.setattr(heap, "BIG", 2000)
    calls, size = _analyze_with(monkeypatch, tmp_path, 400)
    assert size > 2000
    assert calls[:2] == [("mallopt", -3, 1024 * 1024), ("mallopt", -1, 128 * 1024)]
    assert ("malloc_trim", 0) in calls[2:]  # the tree build hands pages back


def test_a_small_trace_never_calls_libc(monkeypatch, tmp_path):
    calls, size = _analyze_with(monkeypatch, tmp_path, 3)
    assert size < heap.BIG and calls == []
