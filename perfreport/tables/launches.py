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

from perfreport.stats.order import median
from perfreport.tables import columns as C
from perfreport.tables.sheet import Sheet


def launch_calls(arr, inverse: bool = True):
    """The distinct launch calls, keyed by (start, duration, op code) and in that order:
    (the call index of each event with a launch call, in event order, when ``inverse``, else
    None; call start, duration, op code)."""
    known = arr.lts == arr.lts
    if not known.any():
        z = np.zeros(0)
        return (np.zeros(0, dtype=np.int64) if inverse else None), z, z, np.zeros(0, dtype=np.int32)
    lts, ldur, op = arr.lts[known], arr.ldur[known], arr.op[known]
    del known
    o = np.lexsort((op, ldur, lts))
    lts = lts[o]  # one at a time: one unsorted copy alive at most
    ldur = ldur[o]
    op = op[o]
    first = np.empty(len(o), dtype=bool)  # the first event of each call, in key order
    first[0] = True
    np.not_equal(lts[1:], lts[:-1], out=first[1:])
    first[1:] |= ldur[1:] != ldur[:-1]
    first[1:] |= op[1:] != op[:-1]
    calls = lts[first], ldur[first], op[first].astype(np.int32)
    del lts, ldur, op
    inv = None
    if inverse:
        call = np.cumsum(first, dtype=np.int32)
        call -= 1
        del first
        inv = np.empty_like(call)
        inv[o] = call
    return (inv, *calls)


def call_index(arr):
    """Launch calls: (event -> call index or -1, call start, call duration, call op code).
    Events of one call share its start and duration (a graph launch owns many events)."""
    inv, cts, cdur, cop = launch_calls(arr)
    idx = np.full(len(arr), -1, dtype=np.int64)
    idx[arr.lts == arr.lts] = inv
    return idx, cts, cdur, cop


def launch_stats(arr) -> Sheet:
    idx, cts, cdur, cop = launch_calls(arr)  # idx: per event with a launch call (ev), its call
    ev = arr.lts == arr.lts  # the events with a launch call; delay and work indexed like idx
    n_ev = int(ev.sum())
    delay = arr.ts[ev]
    delay -= arr.lts[ev]
    ncalls = len(cts)
    dur = arr.te[ev]
    dur -= arr.ts[ev]
    work = np.bincount(idx, weights=dur, minlength=ncalls)
    del dur, idx
    rows = []
    if ncalls:
        rows.append(_row("(all launches)", np.arange(ncalls), slice(None), cdur, work, delay))
        # group calls and events by op code with one sort each (many distinct ops stay linear)
        c_ord = np.argsort(cop, kind="stable")
        e_op = arr.op[ev]
        e_ord = np.argsort(e_op, kind="stable")
        e_op = e_op[e_ord]
        codes = np.arange(len(arr.op_names))
        c_lo, c_hi = np.searchsorted(cop[c_ord], codes), np.searchsorted(cop[c_ord], codes, side="right")
        e_lo, e_hi = np.searchsorted(e_op, codes), np.searchsorted(e_op, codes, side="right")
        del e_op
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
        f"{n_ev} of {len(arr)} GPU events have a launch call in the trace; delay = GPU "
        "start - launch call start; clock skew = a start before its launch (left out of the delay figures)"
    ]
    return Sheet("launch_stats", cols, rows, fmt, notes)


def _row(name, calls, events, cdur, work, delay):
    """One row: ``events`` index ``delay`` (the events with a launch call; a slice for all)."""
    ld = cdur[calls]
    d = delay[events]
    ok = d >= 0
    n_ev = d.size
    dd = d[ok]
    del d
    return [
        name,
        int(calls.size),
        int(n_ev),
        float(ld.sum()),
        float(ld.mean()),
        float(median(dd, overwrite=True)) if dd.size else None,  # dd is a copy
        float(dd.max()) if dd.size else None,
        int((work[calls] < ld).sum()),
        int(n_ev - ok.sum()),
    ]


def queue_depth(launch: np.ndarray, start: np.ndarray) -> tuple[int, float, float]:
    """(max, time-weighted mean, share of time empty) of #(launch <= t < start) over
    [min(launch), max(start)]; events with start < launch (clock skew) are left out."""
    ok = start >= launch
    if not ok.all():
        launch, start = launch[ok], start[ok]
    del ok
    if launch.size == 0:
        return 0, 0.0, 0.0
    # the launches and starts merged in time order, at equal times the starts (-1) first:
    # a launch's place is its rank among the launches plus the starts at or before it
    # (starts come sorted when they are one stream's events in ts order)
    if start.size > 1 and not (start[1:] >= start[:-1]).all():
        start = np.sort(start)
    launch = np.sort(launch)
    at = np.searchsorted(start, launch, side="right")
    at += np.arange(launch.size)
    t = np.empty(launch.size + start.size)
    up = np.zeros(t.size, dtype=bool)  # a launch
    up[at] = True
    t[at] = launch
    del at, launch
    t[~up] = start
    depth = np.cumsum(up, dtype=np.int32)  # launches so far - starts so far
    depth -= np.arange(1, depth.size + 1, dtype=np.int32) - depth
    del up
    span = t[-1] - t[0]
    if span <= 0:
        return int(depth.max()), 0.0, 0.0
    dt = np.diff(t)
    del t
    d0 = depth[:-1]
    mean = float((d0 * dt).sum() / span)
    empty = float(dt[d0 <= 0].sum() / span)
    return int(depth.max()), mean, 100.0 * empty


def launch_queue(arr) -> Sheet:
    rows = []
    known = arr.lts == arr.lts
    for c in sorted(range(len(arr.streams)), key=lambda c: (str(arr.streams[c][0]), str(arr.streams[c][1]))):
        m = known & (arr.stream == c) if len(arr.streams) > 1 else known
        n = int(m.sum())
        if not n:
            continue
        m &= arr.ts >= arr.lts  # queue_depth leaves out clock skew anyway (m is not reused)
        if m.all():  # one stream, no skew: the arrays themselves, no copies
            mx, mean, empty = queue_depth(arr.lts, arr.ts)
        else:
            mx, mean, empty = queue_depth(arr.lts[m], arr.ts[m])
        dev, st = arr.streams[c]
        rows.append([dev, st, n, mx, mean, empty])
    cols = [C.DEVICE, C.STREAM, C.LAUNCHES, C.QUEUED_MAX, C.QUEUED_MEAN, C.NOTHING_QUEUED_PCT]
    return Sheet(
        "launch_queue",
        cols,
        rows,
        {C.QUEUED_MEAN: "0.00", C.NOTHING_QUEUED_PCT: C.PCT},
        ["queue depth = events launched and not yet started, from the stream's first launch to its last start"],
    )


__all__ = ["launch_stats", "launch_queue", "queue_depth", "call_index", "launch_calls"]
