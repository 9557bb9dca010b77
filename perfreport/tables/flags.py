"""Row flags for the perf sheets: what makes a row's figures doubtful, and the likely cause.

A flag is one short text starting with its tag (``<tag>: <detail>``); a row's ``flags`` cell
joins them with ``" | "`` and is empty when nothing is odd. Tags:

* ``above roofline`` -- some instances ran faster than the roofline allows. The detail names
  each likely cause that can cover the excess (:func:`above_roofline`): the operands fit in the
  last-level cache (bytes per call <= the spec's ``llc_bytes``: hits are served faster than HBM;
  never for a host copy, and only while the FLOPs alone fit in the measured time); an attention
  row whose sliding window, sparsity or KV-cache hit the model does not know; kernels
  overlapping work on other streams, when the overlapped time is at least the time the row
  beats the roofline by (:func:`overlap_explains`; the flag states the overlapped share either
  way); an assumption whose lower bound would bring the row under 100%. When none can cover
  it the flag says ``model inputs suspect`` (with the causes that fall short, and why), and
  the coverage statement counts the row's time apart from ``modelled``.
* ``bimodal`` -- the instances' times form two clusters (:func:`bimodal_cut`); the row is split by
  the distinguishing kernels or by layer parity where one of them separates the clusters
  (:func:`split_key`), and each part says what it was split by.
* ``assumption`` -- the figures depend on a number the trace does not record
  (``PerfModel.assumptions()``); the flag names it, and the roofline range columns give its bounds.
* ``host link`` -- a host<->device copy, judged against the spec's host-link bandwidth
  (``host_link_gbps``), not HBM.
"""

from __future__ import annotations

import math
import re

import numpy as np

from perfreport.events import MEMCPY
from perfreport.stats.order import median
from perfreport.tables.gpu_arrays import stream_codes
from perfreport.tables.op_times import remembered, shared_uids

ABOVE, BIMODAL, ASSUMPTION, HOST_LINK = "above roofline", "bimodal", "assumption", "host link"
TAGS = (ABOVE, BIMODAL, ASSUMPTION, HOST_LINK)
SEP = " | "  # between the flags of one cell (a flag's own details use "; ")

# memcpy names as CUPTI / roctracer write them: "Memcpy HtoD (Pageable -> Device)", "Memcpy DtoH
# (Device -> Pinned)"; device-to-device copies ("Memcpy DtoD (Device -> Device)") stay on HBM.
_HOST_RX = re.compile(r"HtoD|DtoH|HtoH|Host|Pinned|Pageable")

BIMODAL_RATIO = 1.5  # gap between the clusters: fastest slow instance / slowest fast one
BIMODAL_MIN_SHARE = 0.1  # each cluster holds at least this share of the instances (and >= 2)
_EPS_US = 1e-3  # 1 ns: touching intervals do not overlap


def is_host_copy(g) -> bool:
    """True for a memcpy between host and device memory (judged against the host link)."""
    return g.cat == MEMCPY and _HOST_RX.search(g.name) is not None


def cross_stream_overlap_us(gpu_events) -> dict:
    """:func:`_overlap_us` of ``gpu_events``, made once while
    :func:`~perfreport.tables.op_times.shared` holds the list (kept over
    :func:`~perfreport.tables.op_times.forget_uids`: made before it, the uids not gathered
    again for the perf sheets). Read-only."""
    return remembered(gpu_events, OVERLAP, lambda: _overlap_us(gpu_events))


OVERLAP = "cross-stream overlap"  # (its key among what shared() remembers)


def _overlap_us(gpu_events) -> dict:
    """uid -> µs of the event's interval during which GPU work on *another* stream of the same
    device runs (the union of the other streams' events, intersected with this event; kernels,
    copies and memsets all count, since all of them load the GPU). Events overlapping nothing on
    another stream are left out.

    Per device: each stream's events are merged into disjoint intervals, so at any instant a
    stream counts at most once; a sweep over all streams' merged intervals gives the set M where
    two or more streams are busy. An event's own stream is busy throughout the event, so the part
    of the event on another stream's work is exactly its intersection with M, read off the
    cumulative length of M at the event's start and end (binary search). Same-stream overlap is
    not counted here: stream time already charges it once (``tree.link.stream_exclusive``).
    """
    out: dict = {}
    for evs, s, e, sid in _per_device(gpu_events):
        t0 = s.min()  # relative µs: absolute ts near 1e15 lose sub-µs digits
        s, e = s - t0, e - t0
        ms, me = _merged_per_stream(sid, s, e)
        pts = np.concatenate((ms, me))
        delta = np.concatenate((np.ones(ms.size, np.int64), -np.ones(me.size, np.int64)))
        o = np.lexsort((delta, pts))  # at one instant ends (-1) before starts: touching is no overlap
        pts, busy = pts[o], np.cumsum(delta[o])
        in_m = np.append(busy[:-1] >= 2, False)  # segment [pts[k], pts[k+1]) lies in M
        cum = np.concatenate(([0.0], np.cumsum(np.where(in_m[:-1], np.diff(pts), 0.0))))

        def m_upto(x):  # length of M before x (x >= pts[0]: its stream's start)
            k = np.maximum(np.searchsorted(pts, x, side="right") - 1, 0)
            return cum[k] + np.where(in_m[k], x - pts[k], 0.0)

        ov = m_upto(e) - m_upto(s)
        for i in np.flatnonzero(ov > _EPS_US).tolist():
            out[evs[i].uid] = float(ov[i])  # (the records' own uid objects: no new int per key)
    return out


def _per_device(gpu_events):
    """Per device with two or more streams, in order of first appearance: (its events, their
    starts, ends and stream codes), in event order. Stream codes number the streams in order of
    first appearance (only their order matters), from the reader's ``ds`` column where every
    event reads from it, else event by event."""
    src, uid = shared_uids(gpu_events)  # (one uid gather for the codes and the columns)
    codes = stream_codes(gpu_events, (src, uid)) if uid is not None else None
    if codes is None:
        by_dev: dict = {}
        for g in gpu_events:
            by_dev.setdefault(g.device, []).append(g)
        for evs in by_dev.values():
            code: dict = {}
            sid = np.fromiter((code.setdefault(g.stream, len(code)) for g in evs), dtype=np.int64, count=len(evs))
            if len(code) < 2:
                continue
            n = len(evs)
            s = np.fromiter((g.ts for g in evs), dtype=np.float64, count=n)
            e = s + np.fromiter((g.dur for g in evs), dtype=np.float64, count=n)
            yield evs, s, e, sid
        return
    dev, stream = codes[0], codes[1]
    ts, dur = (np.asarray(c, dtype=np.float64)[uid] for c in (src.ts, src.dur))
    one = len(codes[2]) == 1
    for d in range(len(codes[2])):
        at = None if one else np.flatnonzero(dev == d)
        sid = stream if one else stream[at]
        if not (sid != sid[0]).any():  # one stream (np.unique would import numpy.ma: ~1 MB)
            continue
        s = ts if one else ts[at]
        evs = gpu_events if one else list(map(gpu_events.__getitem__, at.tolist()))
        yield evs, s, s + (dur if one else dur[at]), sid.astype(np.int64)


def _merged_per_stream(sid, s, e):
    """Disjoint (start, end) arrays: each stream's intervals merged (touching ones joined)."""
    o = np.lexsort((s, sid))
    sid, s, e = sid[o], s[o], e[o]
    run_end = np.empty_like(e)
    starts, ends = [], []
    for a, b in _runs(sid):
        run_end[a:b] = np.maximum.accumulate(e[a:b])
        new = np.ones(b - a, dtype=bool)
        new[1:] = s[a + 1 : b] > run_end[a : b - 1]  # a gap before it: a new merged interval
        first = np.flatnonzero(new) + a
        last = np.append(first[1:] - 1, b - 1)
        starts.append(s[first])
        ends.append(run_end[last])
    return np.concatenate(starts), np.concatenate(ends)


def _runs(codes):
    """(start, stop) of each run of equal values in a sorted array."""
    cut = np.flatnonzero(codes[1:] != codes[:-1]) + 1
    edges = np.concatenate(([0], cut, [codes.size])).tolist()
    return list(zip(edges[:-1], edges[1:]))


def overlap_explains(*, overlap_us: float, excess_us: float) -> bool:
    """The overlap rule: overlap with other streams explains an above-roofline excess only when
    the overlapped time of the instances above 100% is at least their excess, the time they beat
    the roofline by (Σ roofline time − measured time over those instances). While another
    stream runs, the trace cannot say which kernel moved which bytes, so at most the overlapped
    time can be mis-charged; an excess larger than that has another cause. At 130% of roofline
    (measured t = roofline / 1.3) the excess is 0.3 t, so at least 30% of t must be overlapped."""
    return overlap_us > 0 and overlap_us >= excess_us - _EPS_US


def bimodal_cut(times) -> float | None:
    """A time that splits ``times`` into two clusters, or None if they are not bimodal.

    Bimodal: sorted, some consecutive pair (a, b) has b / a >= ``BIMODAL_RATIO`` with at least
    max(2, ceil(10% of n)) instances on each side; the widest such gap wins, cut at (a + b) / 2.
    """
    n = len(times)
    m = max(2, math.ceil(BIMODAL_MIN_SHARE * n))
    if n < 2 * m:
        return None
    s = np.sort(np.asarray(times, dtype=np.float64))
    lo, hi = s[m - 1 : n - m], s[m : n - m + 1]  # pairs (s[i], s[i+1]) with m <= i+1 <= n-m
    ok = lo > 0
    if not ok.any():
        return None
    ratio = np.where(ok, hi / np.where(ok, lo, 1.0), 0.0)
    i = int(np.argmax(ratio))
    if ratio[i] < BIMODAL_RATIO:
        return None
    return float((lo[i] + hi[i]) / 2)


def split_key(times, sigs, parity, cut: float):
    """How to split a bimodal row: ``("kernels", sigs)`` when the instances' kernel lists
    separate the clusters, else ``("layer parity", parity)`` when alternate instances do,
    else None. ``sigs`` / ``parity``: one value per instance."""
    slow = [t > cut for t in times]
    for how, key in (("kernels", sigs), ("layer parity", parity)):
        side: dict = {}
        if all(side.setdefault(k, s) == s for k, s in zip(key, slow)) and len(side) > 1:
            return how, key
    return None


def bimodal_text(times, cut: float) -> str:
    t = np.asarray(times, dtype=np.float64)
    fast, slow = t[t <= cut], t[t > cut]
    return f"{BIMODAL}: {len(fast)} instances near {median(fast):.3g} µs and {len(slow)} near {median(slow):.3g} µs"


SUSPECT = "model inputs suspect"  # an above-roofline figure no known cause can make true


def above_roofline(
    *,
    n_above: int,
    n: int,
    nbytes: float | None,
    llc_bytes: int | None,
    category: str,
    bound: str | None,
    above_us: float = 0.0,
    overlap_us: float = 0.0,
    excess_us: float = 0.0,
    pct_min: float | None,
    assumptions: list[str],
    model: str,
    host_copy: bool = False,
    compute_pct: float | None = None,
    window_ruled_out: bool = False,
) -> tuple[str, bool]:
    """(the ``above roofline`` flag, suspect). A cause is named only when it can cover the
    excess, the time by which the instances beat the roofline:

    * an attention row's unknown sliding window, sparsity or KV reuse (it can shrink the work by
      any factor), unless the model knows the window (``window_ruled_out``);
    * operands that fit in the last-level cache (bytes per call <= ``llc_bytes``), never for a
      host copy (the cache cannot serve the host link), and only while the compute term alone
      fits in the measured time (``compute_pct`` <= 100: the above instances' largest FLOPs /
      peak over their time): a cache hides memory time, not arithmetic;
    * overlap with other streams that covers the excess (:func:`overlap_explains`);
    * an assumption whose lower bound brings the row within 100% (``pct_min``).

    ``above_us``: measured time of the instances above 100%; ``overlap_us``: the part of it
    during which other streams ran (:func:`cross_stream_overlap_us`); ``excess_us``: Σ (roofline
    time − measured time) over them. When no cause covers the excess the figure cannot be true as
    modelled: the flag says :data:`SUSPECT` and ``suspect`` is True (a cause that applies but
    falls short is still named, with why)."""
    causes, short = [], []
    if ("attention" in category.lower() or category.startswith("SDPA")) and not window_ruled_out:
        causes.append(
            "attention with a sliding window, sparsity or KV-cache reuse the model "
            "does not know (it charges the full context)"
        )
    if nbytes is not None and llc_bytes and nbytes <= llc_bytes and not host_copy:
        fit = f"operands ({nbytes / 1e6:.3g} MB per call) fit in the {llc_bytes / 2**20:.0f} MiB last-level cache"
        if compute_pct is None or compute_pct <= 100.0:
            causes.append(f"{fit}: hits beat the HBM roofline")
        else:
            short.append(f"{fit}, but its FLOPs alone need {compute_pct:.0f}% of the time at the compute peak")
    share = overlap_us / above_us if above_us > 0 else 0.0
    overlap = (
        f"{100 * share:.0f}% of the above-roofline time ({overlap_us:,.1f} of {above_us:,.1f} µs) "
        f"ran while other streams were busy"
    )
    if overlap_explains(overlap_us=overlap_us, excess_us=excess_us):
        causes.append(
            f"{overlap}, enough to cover the {excess_us:,.1f} µs by which it beats the "
            "roofline: the per-call time does not isolate its traffic"
        )
    elif overlap_us > 0:
        short.append(f"{overlap}: too little to cover the {excess_us:,.1f} µs excess")
    if assumptions and pct_min is not None:
        if pct_min <= 100.0:
            causes.append(f"within roofline at the assumption's lower bound ({pct_min:.0f}%)")
        else:
            short.append(f"still {pct_min:.0f}% at the assumption's lower bound")
    head = f"{ABOVE}: {n_above} of {n} instances above 100%; "
    if causes:
        text = head + "likely " + "; or ".join(causes)
        return (text + " (" + "; ".join(short) + ")" if short else text), False
    why = "no known cause covers the excess" + (" (" + "; ".join(short) + ")" if short else "")
    return head + f"{SUSPECT}: {why}; check {model}'s bytes and FLOPs", True


def host_link_text(gbps: float, how: str = "") -> str:
    """The ``host link`` flag; ``how``: where the bytes that cross the link once came from."""
    text = f"{HOST_LINK}: host<->device copy judged against the {gbps:g} GB/s host link, not HBM"
    return f"{text}; bytes crossing it once: {how}" if how else text


def assumption_texts(assumptions: list[str]) -> list[str]:
    return [f"{ASSUMPTION}: {a}" for a in assumptions]


def tag_of(flag: str) -> str:
    """The tag of one flag text (the part before the first colon)."""
    return flag.split(":", 1)[0].strip()


def join_flags(flags: list[str]) -> str:
    return SEP.join(flags)


def split_flags(cell: str | None) -> list[str]:
    """The flags in one ``flags`` cell."""
    return cell.split(SEP) if cell else []


__all__ = [
    "ABOVE",
    "BIMODAL",
    "ASSUMPTION",
    "HOST_LINK",
    "TAGS",
    "SEP",
    "is_host_copy",
    "cross_stream_overlap_us",
    "overlap_explains",
    "bimodal_cut",
    "split_key",
    "bimodal_text",
    "above_roofline",
    "SUSPECT",
    "host_link_text",
    "assumption_texts",
    "tag_of",
    "join_flags",
    "split_flags",
]
