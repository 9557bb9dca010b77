"""Launch statistics: what each kernel launch cost the CPU and how long the kernel then waited.

For every GPU event with a launch call in the trace (``GpuEvent.launch_call``):

* launch time = the call's own duration (``cudaLaunchKernel``, ``hipModuleLaunchKernel``,
  ``cudaGraphLaunch`` ...: the CPU time the launch cost);
* delay = kernel start - call start (time from the launch to the GPU starting it: queueing
  behind earlier work plus the launch latency). A negative delay is impossible in one clock
  domain: it is counted as clock skew (CPU and GPU timestamps from different clocks) and left
  out of the delay figures;
* "GPU work shorter than its launch": a call whose GPU events together ran for less than the
  call's own CPU time (the CPU cannot keep such a stream busy without graphs or fusion).
  A graph launch is one call owning many events: its CPU time is counted once.

``launch_queue``: per (device, stream), the queue depth over time, i.e. how many events were
launched and not yet started, from the first launch to the last start: its maximum, its
time-weighted mean, and the share of that time with nothing queued.
"""

from __future__ import annotations

import numpy as np

from perfreport.tables import columns as C
from perfreport.tables.sheet import Sheet


def call_index(arr):
    """Launch calls: (event -> call index or -1, call start, call duration, call op code).
    Events of one call share its start and duration (a graph launch owns many events)."""
    known = arr.lts == arr.lts
    idx = np.full(len(arr), -1, dtype=np.int64)
    if not known.any():
        z = np.zeros(0)
        return idx, z, z, np.zeros(0, dtype=np.int32)
    key = np.stack([arr.lts[known], arr.ldur[known], arr.op[known].astype(np.float64)])
    uniq, inv = np.unique(key, axis=1, return_inverse=True)
    idx[known] = inv.reshape(-1)
    return idx, uniq[0], uniq[1], uniq[2].astype(np.int32)


def launch_stats(arr) -> Sheet:
    idx, cts, cdur, cop = call_index(arr)
    has = idx >= 0
    delay = arr.ts - arr.lts
    ncalls = len(cts)
    work = np.bincount(idx[has], weights=(arr.te - arr.ts)[has], minlength=ncalls)
    rows = []
    if ncalls:
        rows.append(_row("(all launches)", np.arange(ncalls), np.flatnonzero(has), cdur, work, delay))
        # group calls and events by op code with one sort each (many distinct ops stay linear)
        c_ord = np.argsort(cop, kind="stable")
        ev = np.flatnonzero(has)
        e_ord = ev[np.argsort(arr.op[ev], kind="stable")]
        codes = np.arange(len(arr.op_names))
        c_lo, c_hi = np.searchsorted(cop[c_ord], codes), np.searchsorted(cop[c_ord], codes, side="right")
        e_lo, e_hi = np.searchsorted(arr.op[e_ord], codes), np.searchsorted(arr.op[e_ord], codes, side="right")
        per = np.bincount(cop, weights=cdur, minlength=len(codes))
        for code in np.argsort(-per, kind="stable"):
            if c_hi[code] > c_lo[code]:
                rows.append(
                    _row(
                        arr.op_names[code],
                        c_ord[c_lo[code] : c_hi[code]],
                        e_ord[e_lo[code] : e_hi[code]],
                        cdur,
                        work,
                        delay,
                    )
                )
    cols = [
        C.OP,
        C.LAUNCH_CALLS,
        C.GPU_EVENTS,
        C.LAUNCH_TIME_SUM_US,
        C.LAUNCH_TIME_MEAN_US,
        C.DELAY_MEDIAN_US,
        C.DELAY_MAX_US,
        C.GPU_WORK_SHORTER_THAN_LAUNCH,
        C.CLOCK_SKEW,
    ]
    fmt = {c: "0.000" for c in cols if c.endswith("(µs)")}
    notes = [
        f"{int(has.sum())} of {len(arr)} GPU events have a launch call in the trace; delay = GPU "
        "start - launch call start; clock skew = a start before its launch (left out of the delay figures)"
    ]
    return Sheet("launch_stats", cols, rows, fmt, notes)


def _row(name, calls, events, cdur, work, delay):
    ld = cdur[calls]
    d = delay[events]
    ok = d >= 0
    dd = d[ok]
    return [
        name,
        int(calls.size),
        int(events.size),
        float(ld.sum()),
        float(ld.mean()),
        float(np.median(dd)) if dd.size else None,
        float(dd.max()) if dd.size else None,
        int((work[calls] < ld).sum()),
        int((~ok).sum()),
    ]


def queue_depth(launch: np.ndarray, start: np.ndarray) -> tuple[int, float, float]:
    """(max, time-weighted mean, share of time empty) of #(launch <= t < start) over
    [min(launch), max(start)]; events with start < launch (clock skew) are left out."""
    ok = start >= launch
    launch, start = launch[ok], start[ok]
    if launch.size == 0:
        return 0, 0.0, 0.0
    t = np.concatenate([launch, start])
    step = np.concatenate([np.ones(launch.size), -np.ones(start.size)])
    o = np.lexsort((step, t))  # at equal times the start (-1) comes before the launch (+1)
    t, step = t[o], step[o]
    depth = np.cumsum(step)
    span = t[-1] - t[0]
    if span <= 0:
        return int(depth.max()), 0.0, 0.0
    dt = np.diff(t)
    mean = float((depth[:-1] * dt).sum() / span)
    empty = float(dt[depth[:-1] <= 0].sum() / span)
    return int(depth.max()), mean, 100.0 * empty


def launch_queue(arr) -> Sheet:
    rows = []
    known = arr.lts == arr.lts
    for c in sorted(range(len(arr.streams)), key=lambda c: (str(arr.streams[c][0]), str(arr.streams[c][1]))):
        m = known & (arr.stream == c)
        if not m.any():
            continue
        mx, mean, empty = queue_depth(arr.lts[m], arr.ts[m])
        dev, st = arr.streams[c]
        rows.append([dev, st, int(m.sum()), mx, mean, empty])
    cols = [C.DEVICE, C.STREAM, C.LAUNCHES, C.QUEUED_MAX, C.QUEUED_MEAN, C.NOTHING_QUEUED_PCT]
    return Sheet(
        "launch_queue",
        cols,
        rows,
        {C.QUEUED_MEAN: "0.00", C.NOTHING_QUEUED_PCT: C.PCT},
        ["queue depth = events launched and not yet started, from the stream's first launch to its last start"],
    )


__all__ = ["launch_stats", "launch_queue", "queue_depth", "call_index"]
