"""``idle_time``: why each GPU sat idle, per device and per stream.

An idle interval of a device is a gap in the union of its GPU events (kernels, copies,
memsets): the same gaps whose lengths make ``gpu_timeline``'s idle, so a device's three parts
add to that figure exactly. Each instant t of a gap is one of:

* **host wait**: no GPU event of the device is *queued* at t (launched by t, not yet started):
  the GPU waits for the CPU to launch work (the CPU is late: Python overhead, a sync, a
  host-side gap between steps);
* **GPU wait**: some event is queued at t but has not started: it waits on something other than
  the host (a stream or event dependency, a copy, another device);
* **unknown**: the event that ends the gap has no launch call in the trace (launched before the
  profiling window, linked by ``External id`` only, or a launch time after its own start: clock
  skew), and nothing with a known launch is queued, so the two cannot be told apart.

A gap [a, b) is split at Lq = the earliest known launch among the events starting at b or
later: [a, min(Lq, b)) is host wait (unknown if the gap's closing event has no known launch),
the rest is GPU wait. Per stream the rule is the same over the stream's own gaps (between its
first and last event) with the stream's own queue.
"""

from __future__ import annotations

import numpy as np

from perfreport.tables import columns as C
from perfreport.tables.sheet import Sheet


def split_gaps(ts: np.ndarray, te: np.ndarray, lt: np.ndarray):
    """Gaps of the union of [ts, te) (sorted by ts) and their split.

    Returns (a, b, host, unknown, gpu): gap starts and ends, and per gap the host-wait,
    unknown and GPU-wait lengths (host + unknown + gpu = b - a)."""
    n = len(ts)
    empty = np.zeros(0)
    if n < 2:
        return empty, empty, empty, empty, empty
    run_end = np.maximum.accumulate(te)
    nxt = np.flatnonzero(ts[1:] > run_end[:-1]) + 1  # events that open a new run after a gap
    a, b = run_end[nxt - 1], ts[nxt]
    known = np.where((lt == lt) & (lt <= ts), lt, np.inf)  # NaN / after start: not known
    sufmin = np.minimum.accumulate(known[::-1])[::-1]
    lq = sufmin[nxt]
    before = np.clip(lq - a, 0.0, b - a)  # time before anything was queued
    closing_known = np.isfinite(known[nxt])
    host = np.where(closing_known, before, 0.0)
    unknown = np.where(closing_known, 0.0, before)
    return a, b, host, unknown, (b - a) - before


def host_wait(arr) -> list[tuple[np.ndarray, np.ndarray]]:
    """Host-wait intervals per device: [(starts, ends)], each sorted and disjoint."""
    out = []
    for d in range(len(arr.devices)):
        m = arr.dev == d
        a, _, host, _, _ = split_gaps(arr.ts[m], arr.te[m], arr.lts[m])
        keep = host > 0
        out.append((a[keep], (a + host)[keep]))
    return out


def _row(device, stream, ts, te, lt, note=""):
    a, b, host, unk, gpu = split_gaps(ts, te, lt)
    idle = float((b - a).sum())
    h, u, w = float(host.sum()), float(unk.sum()), float(gpu.sum())
    return [device, stream, len(a), idle, h, w, u, 100.0 * h / idle if idle else 0.0, note]


def idle_time(arr) -> Sheet:
    """The sheet from :func:`perfreport.tables.gpu_arrays.gpu_arrays` of the tree."""
    rows = []
    for d in sorted(range(len(arr.devices)), key=lambda d: str(arr.devices[d])):
        m = arr.dev == d
        rows.append(_row(arr.devices[d], "all", arr.ts[m], arr.te[m], arr.lts[m], "adds to gpu_timeline idle"))
        codes = sorted({int(c) for c in np.unique(arr.stream[m])}, key=lambda c: str(arr.streams[c][1]))
        if len(codes) > 1:
            for c in codes:
                k = arr.stream == c
                rows.append(_row(arr.devices[d], arr.streams[c][1], arr.ts[k], arr.te[k], arr.lts[k]))
    cols = [
        C.DEVICE,
        C.STREAM,
        C.GAPS,
        C.IDLE_US,
        C.HOST_WAIT_US,
        C.GPU_WAIT_US,
        C.UNKNOWN_US,
        C.HOST_WAIT_PCT,
        C.NOTE,
    ]
    fmt = {c: "0.000" for c in cols if c.endswith("(µs)")}
    fmt[C.HOST_WAIT_PCT] = C.PCT
    notes = [
        "host wait: nothing launched and not yet started (the CPU is late); GPU wait: work was queued "
        "but waited on a dependency; unknown: the closing event has no launch call in the trace",
        "a device's 'all' row adds to gpu_timeline's idle; stream rows cover each stream's own gaps",
    ]
    return Sheet("idle_time", cols, rows, fmt, notes)


__all__ = ["idle_time", "split_gaps", "host_wait"]
