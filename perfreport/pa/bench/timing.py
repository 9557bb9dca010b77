"""Cold-cache timing of one launch.

GPU (CUDA or HIP through ``torch.cuda``): before every rep a buffer at least twice the last-level
cache is overwritten, so no KV byte is served from L2/MALL; start/end events bracket the launch
only (the flush runs before the start event). Warm-up calls (which include Triton compilation and
autotuning, if any) are excluded. With ``graph=True`` the launch is captured once into a CUDA/HIP
graph and each rep replays it. Result: median, p10, p90 over the reps (>= 100 on a GPU by default).

CPU: ``time.perf_counter`` around each call, no flush; results are labelled ``cpu`` so nobody
mistakes them for GPU kernel times.

LLC size: ``torch.cuda.get_device_properties().L2_cache_size`` when torch reports it, else the
GPU spec's ``llc_bytes`` (e.g. the 256 MB Infinity Cache of MI300X), else 256 MB.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable

DEFAULT_LLC = 256 * 2**20


@dataclass
class Timing:
    median_us: float
    p10_us: float
    p90_us: float
    reps: int
    clock: str  # "gpu-events", "gpu-graph" or "cpu"
    flush_bytes: int

    @property
    def is_cpu(self) -> bool:
        return self.clock == "cpu"


def percentile(sorted_values: list[float], q: float) -> float:
    """Linear-interpolated percentile of an ascending list (q in [0, 100])."""
    if not sorted_values:
        raise ValueError("no samples")
    pos = (len(sorted_values) - 1) * q / 100.0
    lo = int(pos)
    hi = min(lo + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (pos - lo)


def summarize(samples_us: list[float], clock: str, flush_bytes: int = 0) -> Timing:
    s = sorted(samples_us)
    return Timing(percentile(s, 50), percentile(s, 10), percentile(s, 90), len(s), clock, flush_bytes)


def llc_bytes(device=None, spec=None) -> int:
    """Last-level cache size: torch device properties, else the spec, else 256 MB."""
    try:
        import torch

        if torch.cuda.is_available():
            props = torch.cuda.get_device_properties(device if device is not None else 0)
            l2 = int(getattr(props, "L2_cache_size", 0) or 0)
            if l2 > 0:
                # AMD MALL (Infinity Cache) is not in L2_cache_size: take the larger of the two
                spec_llc = int(getattr(spec, "llc_bytes", 0) or 0)
                return max(l2, spec_llc)
    except Exception:
        pass
    spec_llc = getattr(spec, "llc_bytes", None)
    return int(spec_llc) if spec_llc else DEFAULT_LLC


def time_cpu(fn: Callable[[], object], reps: int, warmup: int = 1) -> Timing:
    for _ in range(warmup):
        fn()
    samples = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - t0) * 1e6)
    return summarize(samples, "cpu")


def time_gpu(fn: Callable[[], object], reps: int, *, flush_bytes: int, graph: bool = False, warmup: int = 3) -> Timing:
    """Cold-cache CUDA/HIP event timing of ``fn`` (one launch per call)."""
    import torch

    flush = torch.empty(max(flush_bytes, 1) // 4, dtype=torch.int32, device="cuda")
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        for _ in range(warmup):  # compiles, autotunes, allocates
            fn()
    torch.cuda.current_stream().wait_stream(stream)
    torch.cuda.synchronize()
    run = fn
    if graph:
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            fn()
        torch.cuda.synchronize()
        run = g.replay
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    for i in range(reps):
        flush.fill_(i)  # evicts L2 (and MALL) before the start event
        starts[i].record()
        run()
        ends[i].record()
    torch.cuda.synchronize()
    samples = [s.elapsed_time(e) * 1e3 for s, e in zip(starts, ends)]
    return summarize(samples, "gpu-graph" if graph else "gpu-events", flush_bytes)


def time_launch(
    fn: Callable[[], object], reps: int, *, on_gpu: bool, flush_bytes: int = 0, graph: bool = False
) -> Timing:
    if on_gpu:
        return time_gpu(fn, reps, flush_bytes=flush_bytes, graph=graph)
    return time_cpu(fn, reps)


__all__ = ["Timing", "llc_bytes", "percentile", "summarize", "time_cpu", "time_gpu", "time_launch"]
