"""``steps``: the run step by step (steps from :mod:`perfreport.tree.steps`).

Per step, its GPU events are those whose launch call starts inside the step's CPU range (or,
without a launch call in the trace, whose launching op does); unlinked events belong to no step.

* GPU window = first start to last end of the step's GPU events; busy = the union of them;
  idle = window - busy; host wait = the part of the window that is host-wait idle on the
  devices (:mod:`perfreport.tables.idle`);
* step time = from the step's start to the later of its CPU end and its last GPU end;
* launch calls / launch time = the launch calls that start inside the step and their CPU time;
* tokens = new tokens of the step's iteration annotations; time per token = step time / tokens;
* verdict "CPU-bound" when host wait exceeds :data:`CPU_BOUND_SHARE` of the step time: the GPU
  waited on the host for that share of the step.
"""

from __future__ import annotations

import numpy as np

from perfreport.tables.idle import host_wait
from perfreport.tables.launches import launch_calls
from perfreport.tables import columns as C
from perfreport.tables.sheet import Sheet
from perfreport.tables.timeline import union_length
from perfreport.tree.steps import find_steps

CPU_BOUND_SHARE = 0.30


def _covered(starts: np.ndarray, ends: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Length of [a_i, b_i) covered by the sorted, disjoint intervals [starts, ends)."""
    if starts.size == 0:
        return np.zeros(len(a))
    cum = np.concatenate([[0.0], np.cumsum(ends - starts)])

    def before(t):  # total interval length before t
        i = np.searchsorted(starts, t, side="right")  # intervals starting at or before t
        full = cum[i]
        last = np.clip(i - 1, 0, None)
        over = np.where(i > 0, np.clip(ends[last] - t, 0.0, None), 0.0)  # the part of the last one after t
        return full - over

    return np.clip(before(b) - before(a), 0.0, None)


def event_steps(arr, steps) -> np.ndarray:
    """Per GPU event of ``arr``, the index in ``steps`` of the step it belongs to (its launch
    call, else its launching op, starts inside the step's CPU range), -1 for none."""
    if not steps:
        return np.full(len(arr), -1, dtype=np.int64)
    starts = np.array([s.ts for s in steps])
    ends = np.array([s.end for s in steps])
    when = arr.lts.copy()  # launch call, else launching op (NaN: neither)
    no_call = np.isnan(when)
    when[no_call] = arr.owner_ts[no_call]
    del no_call
    si = np.searchsorted(starts, when, side="right")
    ok = si > 0  # a step starts at or before it
    si -= 1
    np.maximum(si, 0, out=si)
    ok &= when < ends[si]  # ... and ends after it (False for NaN)
    del when
    si[~ok] = -1
    return si


def step_rows(tree, arr, steps=None) -> list[dict]:
    steps = find_steps(tree) if steps is None else steps
    if not steps:
        return []
    ns = len(steps)
    starts = np.array([s.ts for s in steps])
    ends = np.array([s.end for s in steps])
    si = event_steps(arr, steps)
    ev = np.argsort(si, kind="stable")  # by step, then by start (arr is in ts order); -1 first
    count = np.bincount(si[si >= 0], minlength=ns)
    ev = ev[len(si) - int(count.sum()) :]
    del si
    hi = np.cumsum(count)
    lo = hi - count
    del count
    g0 = np.zeros(ns)
    g1 = np.zeros(ns)
    busy = np.zeros(ns)
    for i in range(ns):
        e = ev[lo[i] : hi[i]]
        if e.size:
            g0[i], g1[i] = arr.ts[e[0]], arr.te[e].max()
            busy[i] = union_length(arr.ts[e], arr.te[e])
    del ev
    _, cts, cdur, _ = launch_calls(arr, inverse=False)
    ci = np.searchsorted(starts, cts, side="right") - 1
    cok = ci >= 0
    cok[cok] &= cts[cok] < ends[ci[cok]]
    ncall = np.bincount(ci[cok], minlength=ns)
    lsum = np.bincount(ci[cok], weights=cdur[cok], minlength=ns)
    del ci, cok, cts, cdur
    waits = host_wait(arr)  # per device; a step's host wait adds its devices'
    host = np.where(hi > lo, sum((_covered(a, b, g0, g1) for a, b in waits), np.zeros(ns)), 0.0)
    out = []
    for i, s in enumerate(steps):
        n_ev = int(hi[i] - lo[i])
        step_time = max(s.end, g1[i] if n_ev else s.end) - s.ts
        h = float(host[i])
        out.append(
            {
                C.STEP: s.number,
                C.LABEL: s.label,
                C.SOURCE: s.source,
                C.KIND: s.kind or "",
                C.CPU_TIME_US: s.end - s.ts,
                C.STEP_TIME_US: step_time,
                C.GPU_EVENTS: n_ev,
                C.GPU_WINDOW_US: float(g1[i] - g0[i]),
                C.GPU_BUSY_US: float(busy[i]),
                C.GPU_IDLE_US: float(g1[i] - g0[i] - busy[i]),
                C.HOST_WAIT_US: h,
                C.HOST_WAIT_PCT: 100.0 * h / step_time if step_time > 0 else 0.0,
                C.LAUNCH_CALLS: int(ncall[i]),
                C.LAUNCH_TIME_US: float(lsum[i]),
                C.TOKENS: s.tokens,
                C.TIME_PER_TOKEN_US: step_time / s.tokens if s.tokens else None,
                C.VERDICT: "CPU-bound" if step_time > 0 and h > CPU_BOUND_SHARE * step_time else "",
                C.NOTE: s.warmup,
            }
        )
    return out


COLUMNS = [
    C.STEP,
    C.LABEL,
    C.SOURCE,
    C.KIND,
    C.CPU_TIME_US,
    C.STEP_TIME_US,
    C.GPU_EVENTS,
    C.GPU_WINDOW_US,
    C.GPU_BUSY_US,
    C.GPU_IDLE_US,
    C.HOST_WAIT_US,
    C.HOST_WAIT_PCT,
    C.LAUNCH_CALLS,
    C.LAUNCH_TIME_US,
    C.TOKENS,
    C.TIME_PER_TOKEN_US,
    C.VERDICT,
    C.NOTE,
]


def steps_sheet(tree, arr, steps=None, note: str | None = None) -> Sheet:
    recs = step_rows(tree, arr, steps)
    fmt = {c: "0.000" for c in COLUMNS if c.endswith("(µs)")}
    fmt[C.HOST_WAIT_PCT] = C.PCT
    notes = [note] if note else []
    if recs:
        notes.append(
            f"{len(recs)} step(s) from {recs[0]['source']}; CPU-bound = host wait above "
            f"{CPU_BOUND_SHARE:.0%} of the step time"
        )
    else:
        notes.append("no steps found (no ProfilerStep#N, iteration annotation or graph replay)")
    return Sheet.from_records("steps", recs, COLUMNS, fmt, notes)


__all__ = ["steps_sheet", "step_rows", "event_steps", "CPU_BOUND_SHARE", "COLUMNS"]
