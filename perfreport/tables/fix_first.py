"""``fix_first``: the time that could be won, largest first, each figure traceable to its rows.

Kinds of win (all in µs of GPU time, share of the run = of the longest device's timeline total):

* **roofline gap** of a modelled ``unified_perf_summary`` row: the time saved if the row ran at
  ``target`` of its roofline: won = time - roofline time / target (0 when already there).
  Where the row's roofline time has bounds (an assumption), won spans
  [time - roofline max / target, time - roofline min / target] and the row sorts by the lower
  bound; a row whose flags say its model inputs are suspect sorts by its lower bound too and
  says so (its figure may be an artefact of the inputs, not of the kernel);
* **host wait**: the device's host-wait idle (``idle_time``), which graph capture, fusion or a
  faster launch path could recover at most;
* **exposed communication** / **exposed memcpy** (``gpu_timeline``): time that overlapping the
  transfer with compute could recover at most.

The ranking is by the sort figure (the lower bound where the row has bounds, else the point).
"""

from __future__ import annotations

from perfreport.tables import columns as C
from perfreport.tables.sheet import Sheet

TARGET = 0.80
SUSPECT = "suspect"  # the word the flag for implausible model inputs carries

COLUMNS = [
    C.PRIORITY,
    C.KIND,
    C.WHAT,
    C.TIME_NOW_US,
    C.WON_US,
    C.WON_MIN_US,
    C.WON_MAX_US,
    C.SHARE_OF_RUN_PCT,
    C.EVIDENCE,
    C.CAVEAT,
]


def _num(v):
    return v if isinstance(v, (int, float)) and v == v else None


def roofline_wins(unified: Sheet, target: float) -> list[dict]:
    ix = {c: i for i, c in enumerate(unified.columns)}
    out = []
    dims = ix.get(C.INPUT_DIMS)
    for n, r in enumerate(unified.rows, 1):
        t = _num(r[ix[C.TIME_SUM_US]])
        roof = _num(r[ix[C.ROOFLINE_TIME_US]])
        if not t or roof is None or roof <= 0:
            continue
        lo_roof = _num(r[ix[C.ROOFLINE_TIME_MIN_US]]) if C.ROOFLINE_TIME_MIN_US in ix else None
        hi_roof = _num(r[ix[C.ROOFLINE_TIME_MAX_US]]) if C.ROOFLINE_TIME_MAX_US in ix else None
        won = max(0.0, t - roof / target)
        wmin = max(0.0, t - (hi_roof if hi_roof is not None else roof) / target)
        wmax = max(0.0, t - (lo_roof if lo_roof is not None else roof) / target)
        if wmax <= 0:
            continue
        flags = str(r[ix[C.FLAGS]] or "") if "flags" in ix else ""
        caveat = []
        if SUSPECT in flags:
            caveat.append("model inputs suspect: sorted by the lower bound")
        if wmax - wmin > 1e-9:
            caveat.append("roofline time has bounds (an assumption): sorted by the lower bound")
        key = wmin if caveat else won
        pct = _num(r[ix[C.ROOFLINE_MEAN_PCT]]) if C.ROOFLINE_MEAN_PCT in ix else None
        shape = f" {r[dims]}" if dims is not None and r[dims] else ""
        evid = (
            f"unified_perf_summary row {n}: {r[ix['name']]}{shape} ({r[ix['category']]}), roofline time {roof:.3f} µs"
        )
        if pct is not None:
            evid += f", {pct:.1f}% of roofline"
        out.append(
            {
                C.KIND: "roofline gap",
                C.WHAT: f"{r[ix['name']]}{shape} to {target:.0%} of roofline",
                C.TIME_NOW_US: t,
                C.WON_US: won,
                C.WON_MIN_US: wmin,
                C.WON_MAX_US: wmax,
                C.EVIDENCE: evid,
                C.CAVEAT: "; ".join(caveat),
                "_key": key,
            }
        )
    return out


def idle_wins(timeline: Sheet, idle: Sheet | None) -> list[dict]:
    out = []
    if idle is not None:
        for r in idle.records():
            if r[C.STREAM] == "all" and r[C.HOST_WAIT_US] > 0:
                h = r[C.HOST_WAIT_US]
                out.append(
                    {
                        C.KIND: "host wait",
                        C.WHAT: f"GPU {r['device']} waiting for launches (graph capture, fusion, fewer syncs)",
                        C.TIME_NOW_US: h,
                        C.WON_US: h,
                        C.WON_MIN_US: 0.0,
                        C.WON_MAX_US: h,
                        C.EVIDENCE: f"idle_time: device {r['device']}, {r['gaps']} gaps, host wait {h:.3f} µs",
                        C.CAVEAT: "at most: a launch path still costs some time",
                        "_key": h,
                    }
                )
    for r in timeline.rows:
        dev, kind, ms = r[0], r[1], r[2]
        if kind in ("exposed comm", "exposed memcpy") and ms > 0:
            us = 1000.0 * ms
            what = "communication" if kind == "exposed comm" else "memcpy"
            out.append(
                {
                    C.KIND: f"exposed {what}",
                    C.WHAT: f"GPU {dev}: overlap {what} with compute",
                    C.TIME_NOW_US: us,
                    C.WON_US: us,
                    C.WON_MIN_US: 0.0,
                    C.WON_MAX_US: us,
                    C.EVIDENCE: f"gpu_timeline: device {dev}, {kind} {ms:.3f} ms",
                    C.CAVEAT: "at most: needs independent work to overlap with",
                    "_key": us,
                }
            )
    return out


def fix_first(timeline: Sheet, unified: Sheet | None, idle: Sheet | None, target: float = TARGET) -> Sheet:
    run = max((1000.0 * r[2] for r in timeline.rows if r[1] == "total"), default=0.0)
    recs = (roofline_wins(unified, target) if unified is not None else []) + idle_wins(timeline, idle)
    recs.sort(key=lambda d: -d["_key"])
    for i, d in enumerate(recs, 1):
        d[C.PRIORITY] = i
        d[C.SHARE_OF_RUN_PCT] = 100.0 * d[C.WON_US] / run if run else 0.0
    fmt = {c: "0.000" for c in COLUMNS if c.endswith("(µs)")}
    fmt[C.SHARE_OF_RUN_PCT] = C.PCT
    notes = [
        f"won = time - roofline time / {target:.0%} for op rows (--target-roofline); host wait and exposed "
        "transfers: at most their whole time",
        "share of run = won / the longest device's timeline total; rows with bounds sort by their lower bound",
    ]
    return Sheet.from_records("fix_first", recs, COLUMNS, fmt, notes)


__all__ = ["fix_first", "roofline_wins", "idle_wins", "TARGET", "COLUMNS"]
