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
    a, b, span, before, closing = _gaps(ts, te, lt)
    if closing is None:
        return a, b, a, a, a
    return a, b, np.where(closing, before, 0.0), np.where(closing, 0.0, before), span - before


def _gaps(ts: np.ndarray, te: np.ndarray, lt: np.ndarray, ends: bool = True):
    """(a, b, b - a, host + unknown, whether each gap's closing event has a known launch), with
    at most two arrays of the events' length alive at a time (the rest is per gap); ``ends``
    False: b is None (its array becomes b - a in place: one gap-long array fewer)."""
    if len(ts) < 2:
        z = np.zeros(0)
        return z, z, z, z, None
    run_end = np.maximum.accumulate(te)
    gap = ts[1:] > run_end[:-1]  # event i + 1 opens a new run after a gap
    a = run_end[:-1][gap]
    del run_end
    known = np.where(lt <= ts, lt, np.inf)  # NaN (no call) or after its start: not known
    closing = np.isfinite(known[1:][gap])
    np.minimum.accumulate(known[::-1], out=known[::-1])  # suffix minimum: earliest launch from here on
    before = known[1:][gap]  # the earliest known launch among the events from the gap's end on
    del known
    b = ts[1:][gap]
    del gap
    if ends:
        span = b - a
    else:
        span, b = b, None
        span -= a
    before -= a
    np.clip(before, 0.0, span, out=before)  # time before anything was queued
    return a, b, span, before, closing


def _device(arr, d):
    """(ts, te, lts) of device ``d``'s events: the arrays themselves when it is the only one."""
    if len(arr.devices) == 1:
        return arr.ts, arr.te, arr.lts
    m = arr.dev == d
    return arr.ts[m], arr.te[m], arr.lts[m]


def host_wait(arr) -> list[tuple[np.ndarray, np.ndarray]]:
    """Host-wait intervals per device: [(starts, ends)], each sorted and disjoint."""
    out = []
    for d in range(len(arr.devices)):
        a, _, _, before, closing = _gaps(*_device(arr, d), ends=False)
        if closing is None:
            out.append((a, a))
            continue
        keep = closing & (before > 0)  # host = before where the closing launch is known
        a = a[keep]
        before = before[keep]
        before += a
        out.append((a, before))
    return out


def _row(device, stream, ts, te, lt, note=""):
    a, _, span, before, closing = _gaps(ts, te, lt, ends=False)
    idle = float(span.sum())
    if closing is None:
        h = u = w = 0.0
    else:
        h = float(np.where(closing, before, 0.0).sum())
        u = float(np.where(closing, 0.0, before).sum())
        span -= before
        w = float(span.sum())
    return [device, stream, len(a), idle, h, w, u, 100.0 * h / idle if idle else 0.0, note]


def idle_time(arr) -> Sheet:
    """The sheet from :func:`perfreport.tables.gpu_arrays.gpu_arrays` of the tree."""
    rows = []
    for d in sorted(range(len(arr.devices)), key=lambda d: str(arr.devices[d])):
        rows.append(_row(arr.devices[d], "all", *_device(arr, d), "adds to gpu_timeline idle"))
        on = [i for i, (dev, _) in enumerate(arr.streams) if dev == arr.devices[d]]  # its streams (each has events)
        codes = sorted(on, key=lambda c: str(arr.streams[c][1]))
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
