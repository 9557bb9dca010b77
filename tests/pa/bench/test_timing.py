"""pa/bench/timing.py: percentiles by hand, the LLC size to flush, and the CPU path's labelled
samples (no time is asserted: the CPU path counts its calls and says it is a CPU clock)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from perfreport.pa.bench.timing import DEFAULT_LLC, Timing, llc_bytes, percentile, summarize, time_cpu, time_launch


def test_percentile_interpolates_linearly():
    s = [10.0, 20.0, 30.0, 40.0, 50.0]
    assert (percentile(s, 0), percentile(s, 50), percentile(s, 100)) == (10.0, 30.0, 50.0)
    assert percentile(s, 10) == pytest.approx(14.0)  # position 0.4 between 10 and 20
    assert percentile(s, 90) == pytest.approx(46.0)
    assert percentile([7.0], 90) == 7.0
    with pytest.raises(ValueError, match="no samples"):
        percentile([], 50)


def test_summarize_sorts_first():
    t = summarize([50.0, 10.0, 40.0, 20.0, 30.0], "gpu-events", 1 << 29)
    assert t == Timing(30.0, pytest.approx(14.0), pytest.approx(46.0), 5, "gpu-events", 1 << 29)
    assert not t.is_cpu and summarize([1.0], "cpu").is_cpu


def test_llc_bytes_without_a_gpu():
    pytest.importorskip("torch")
    import torch

    if torch.cuda.is_available():
        pytest.skip("a GPU reports its own L2 size")
    assert llc_bytes(spec=SimpleNamespace(llc_bytes=256_000_000)) == 256_000_000
    assert llc_bytes(spec=SimpleNamespace(llc_bytes=None)) == DEFAULT_LLC == 256 * 2**20
    assert llc_bytes() == DEFAULT_LLC


def test_the_cpu_path_runs_warmup_plus_reps_and_is_labelled_cpu():
    calls = []
    t = time_cpu(lambda: calls.append(1), reps=7, warmup=2)
    assert len(calls) == 9 and (t.reps, t.clock, t.flush_bytes) == (7, "cpu", 0)
    assert t.p10_us <= t.median_us <= t.p90_us
    calls.clear()
    t = time_launch(lambda: calls.append(1), 3, on_gpu=False, flush_bytes=123)
    assert len(calls) == 4 and t.clock == "cpu"
