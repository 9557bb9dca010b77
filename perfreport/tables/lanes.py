"""The data of the HTML page's time-axis timeline: GPU busy per (device, stream) lane, the idle
split per device, and the steps; plain lists for :mod:`perfreport.writers.html_timeline`.

* **lanes**: one per (device, stream), its GPU events (kernels, copies, memsets) as blocks
  ``[s, s + d)`` (µs from the origin ``t0``: the earliest GPU start or step start), each with
  the event's category (its parent op's, as in ``kernel_summary``), kernel name, launching op
  and step (:func:`perfreport.tables.steps.event_steps`: the step whose CPU range holds its
  launch, -1 none);
* **idle**: per device, its gaps split as ``idle_time`` splits them
  (:func:`perfreport.tables.idle.split_gaps`): host wait, GPU wait, unknown;
* **steps**: each step from its start for its step time (the ``steps`` sheet's figures).

**Downsampling.** Every event is its own block when the payload fits :data:`MAX_BYTES`. When
not, a resolution R is taken, the finest of 65,536, 32,768, ... 128 at which it fits, and the
span is cut into R bins of q = span / R: on each lane (events by start), consecutive events
whose starts fall in one bin are merged into one block [first start, latest end), which keeps
its member count, its busy time (its members' share of the lane's union, so the blocks' busy
adds to the lane's busy exactly) and its longest member's name, category and step. The
members' starts lie in one bin, so the idle inside a block is under q: a lane's drawn length
exceeds its busy time by less than q per merged block (tested). At R >= 1,024 a bin is about
a pixel of the full view or less. Idle parts merge by the same rule, each kind on its own.
If even R = 128 does not fit, the lanes with least busy time are left out and named.
"""

from __future__ import annotations

import numpy as np

from perfreport.tables.idle import split_gaps
from perfreport.tables.kernels import parent_op
from perfreport.tables.steps import event_steps
from perfreport.tables import columns as C

MAX_BYTES = 2_000_000  # of the JSON payload embedded in the page
RESOLUTIONS = tuple(1 << k for k in range(16, 6, -1))  # 65,536 ... 128 bins over the span
NAME_CHARS = 160  # names longer than this are shortened in the middle
IDLE_KINDS = ["host wait", "GPU wait", "unknown"]


def short(name: str, n: int = NAME_CHARS) -> str:
    return name if len(name) <= n else name[: n - 60] + "…" + name[-59:]


def merge_blocks(s: np.ndarray, e: np.ndarray, q: float | None):
    """Blocks of one lane's intervals [s, e) (sorted by s): (first index of each block, block
    start, block end, member count, busy) where busy is each block's part of the union of all
    intervals (the blocks' busy sums to the union's length). ``q`` None: every interval a
    block; else intervals whose starts fall in one bin [k q, (k + 1) q) share a block."""
    n = len(s)
    if n == 0:
        z = np.zeros(0)
        return np.zeros(0, dtype=np.int64), z, z, np.zeros(0, dtype=np.int64), z
    prev = np.concatenate([[-np.inf], np.maximum.accumulate(e)[:-1]])
    contrib = np.clip(e - np.maximum(s, prev), 0.0, None)  # new time each interval adds to the union
    if q is None:
        idx = np.arange(n)
    else:
        b = np.floor(s / q)
        idx = np.flatnonzero(np.concatenate([[True], b[1:] != b[:-1]]))
    cnt = np.diff(np.append(idx, n))
    return idx, s[idx], np.maximum.reduceat(e, idx), cnt, np.add.reduceat(contrib, idx)


def _longest(d: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """Per block (first indices ``idx``), the index of its longest member (first of equals)."""
    top = np.repeat(np.maximum.reduceat(d, idx), np.diff(np.append(idx, len(d))))
    cand = np.where(d == top, np.arange(len(d)), len(d))
    return np.minimum.reduceat(cand, idx)


def _events(tree, arr, include_unlinked, steps, t0):
    gpu = [g for g in tree.gpu if include_unlinked or g.launcher is not None]
    cats: dict = {}
    names: dict = {}
    cat = np.empty(len(gpu), dtype=np.int64)
    name = np.empty(len(gpu), dtype=np.int64)
    seen: dict = {}  # (launching op, kernel name) -> (cat code, name code)
    for i, g in enumerate(gpu):
        key = (id(g.op), id(g.launcher), g.name, g.cat, g.launch_name)
        codes = seen.get(key)
        if codes is None:
            c = parent_op(g)[1]
            codes = seen[key] = (cats.setdefault(c, len(cats)), names.setdefault(g.name, len(names)))
        cat[i], name[i] = codes
    return arr.ts - t0, _durations(gpu), cat, name, event_steps(arr, steps), list(cats), list(names)


def _durations(gpu) -> np.ndarray:
    """The events' own durations (``te - ts`` of absolute times would round them): one gather
    from the reader's columns when every event is still in them, else one by one."""
    src = gpu[0]._src if gpu else None
    if src is not None and src.__class__ is not tuple and all(g._src is src for g in gpu):
        uid = np.fromiter((g.uid for g in gpu), dtype=np.int64, count=len(gpu))
        return np.asarray(src.dur, dtype=np.float64)[uid]
    return np.fromiter((g.dur for g in gpu), dtype=np.float64, count=len(gpu))


def _lanes(arr, s, d, cat, name, step, q):
    out = []
    for code in sorted(range(len(arr.streams)), key=lambda c: (str(arr.streams[c][0]), _num(arr.streams[c][1]))):
        m = np.flatnonzero(arr.stream == code)
        m = m[np.argsort(s[m], kind="stable")]
        ls, ld = s[m], d[m]
        idx, bs, be, cnt, busy = merge_blocks(ls, ls + ld, q)
        top = m[_longest(ld, idx)] if len(idx) else m[:0]
        dev, st = arr.streams[code]
        lane = {
            "label": f"GPU {dev} stream {st}",
            "device": str(dev),
            "stream": str(st),
            "events": int(len(m)),
            "busy": float(busy.sum()),
            "s": bs.tolist(),
            "d": (ld if q is None else be - bs).tolist(),
            "c": cat[top].tolist(),
            "k": name[top].tolist(),
            "o": arr.op[top].tolist(),
            "t": step[top].tolist(),
        }
        if q is not None:
            lane["n"] = cnt.tolist()
            lane["b"] = busy.tolist()
        out.append(lane)
    return out


def _compact(lanes, key, table):
    """Keep the entries of ``table`` the lanes' ``key`` codes use (in first-use order), recode."""
    new: dict = {}
    for lane in lanes:
        lane[key] = [new.setdefault(c, len(new)) for c in lane[key]]
    return [table[c] for c in new]


def _num(v):
    try:
        return (0, float(v), "")
    except (TypeError, ValueError):
        return (1, 0.0, str(v))


def _idle(arr, t0, q):
    out = []
    for dv in sorted(range(len(arr.devices)), key=lambda d: str(arr.devices[d])):
        m = arr.dev == dv
        a, b, host, unk, gw = split_gaps(arr.ts[m], arr.te[m], arr.lts[m])
        a = a - t0
        before = host + unk
        parts = [(a, a + host, host > 0), (a + before, a + before + gw, gw > 0), (a, a + unk, unk > 0)]
        ss, dd, kk, bb = [], [], [], []
        for kind, (x0, x1, keep) in enumerate(parts):
            x0, x1 = x0[keep], x1[keep]
            _, bs, be, _, busy = merge_blocks(x0, x1, q)
            ss.append(bs)
            dd.append(be - bs)
            bb.append(busy)
            kk.append(np.full(len(bs), kind))
        s, dur, kind, busy = (np.concatenate(v) for v in (ss, dd, kk, bb))
        o = np.argsort(s, kind="stable")
        row = {"device": str(arr.devices[dv]), "s": s[o].tolist(), "d": dur[o].tolist(), "kind": kind[o].tolist()}
        if q is not None:
            row["b"] = busy[o].tolist()
        out.append(row)
    return out


def _steps(steps, records, t0):
    out = []
    for st, r in zip(steps, records):
        out.append(
            {
                "number": int(st.number),
                "label": short(st.label),
                "source": st.source,
                "s": float(st.ts - t0),
                "d": float(r[C.STEP_TIME_US]),
                "busy": float(r[C.GPU_BUSY_US]),
                "host": float(r[C.HOST_WAIT_US]),
                "kind": st.kind or "",
                "verdict": r[C.VERDICT],
                "note": st.warmup,
            }
        )
    return out


def timeline_lanes(tree, arr, steps, step_records, include_unlinked=True, max_bytes=MAX_BYTES) -> dict:
    """The payload (see the module docstring); ``arr`` is ``gpu_arrays(tree, include_unlinked)``,
    ``steps`` the steps of ``step_records`` (rows of the ``steps`` sheet, same order)."""
    import orjson

    if not len(arr):
        return {}
    t0 = float(min(arr.ts.min(), min((st.ts for st in steps), default=np.inf)))
    t1 = float(
        max(arr.te.max(), max((st.ts + r[C.STEP_TIME_US] for st, r in zip(steps, step_records)), default=-np.inf))
    )
    span = max(t1 - t0, 1e-3)
    s, d, cat, name, step, cats, names = _events(tree, arr, include_unlinked, steps, t0)
    base = {
        "t0": t0,
        "span": span,
        "events": int(len(s)),
        "cats": cats,
        "kinds": IDLE_KINDS,
        "steps": _steps(steps, step_records, t0),
        "dropped": [],
    }
    names = [short(n) for n in names]
    size = 0
    for r in (None, *RESOLUTIONS):
        if r is None and len(s) * 40 > max_bytes:  # ~40 bytes a block: cannot fit unmerged
            continue
        q = None if r is None else span / r
        out = dict(base, resolution=r, bin_us=q, merged=r is not None)
        out["lanes"] = _lanes(arr, s, d, cat, name, step, q)
        out["names"] = _compact(out["lanes"], "k", names)
        out["ops"] = _compact(out["lanes"], "o", [short(str(o)) for o in arr.op_names])
        out["idle"] = _idle(arr, t0, q)
        size = len(orjson.dumps(out))
        if size <= max_bytes:
            break
    while size > max_bytes and len(out["lanes"]) > 1:  # even R = 128 too big: drop the idlest lane
        lane = min(out["lanes"], key=lambda x: x["busy"])
        out["lanes"].remove(lane)
        out["dropped"].append(lane["label"])
        size = len(orjson.dumps(out))
    out["blocks"] = sum(len(x["s"]) for x in out["lanes"])
    out["bytes"] = size
    return out


__all__ = ["timeline_lanes", "merge_blocks", "MAX_BYTES", "RESOLUTIONS", "IDLE_KINDS", "short"]
