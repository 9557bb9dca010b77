"""Row flags for the perf sheets: what makes a row's figures doubtful, and the likely cause.

A flag is one short text starting with its tag (``<tag>: <detail>``); a row's ``flags`` cell
joins them with ``" | "`` and is empty when nothing is odd. Tags:

* ``above roofline`` -- some instances ran faster than the roofline allows. The detail names
  every likely cause that applies (:func:`above_roofline_causes`): the operands fit in the
  last-level cache (bytes per call <= the spec's ``llc_bytes``: hits are served faster than
  HBM); an attention row whose sliding window, sparsity or KV-cache hit the model does not know;
  kernels overlapping other GPU work (the per-call time does not isolate this row's traffic); an
  assumption whose lower bound would bring the row under 100%; else "no known cause".
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

ABOVE, BIMODAL, ASSUMPTION, HOST_LINK = "above roofline", "bimodal", "assumption", "host link"
TAGS = (ABOVE, BIMODAL, ASSUMPTION, HOST_LINK)
SEP = " | "                # between the flags of one cell (a flag's own details use "; ")

# memcpy names as CUPTI / roctracer write them: "Memcpy HtoD (Pageable -> Device)", "Memcpy DtoH
# (Device -> Pinned)"; device-to-device copies ("Memcpy DtoD (Device -> Device)") stay on HBM.
_HOST_RX = re.compile(r"HtoD|DtoH|HtoH|Host|Pinned|Pageable")

BIMODAL_RATIO = 1.5        # gap between the clusters: fastest slow instance / slowest fast one
BIMODAL_MIN_SHARE = 0.1    # each cluster holds at least this share of the instances (and >= 2)
OVERLAP_MIN_SHARE = 0.01   # overlap below 1% of a row's kernel time is not worth a flag
_EPS_US = 1e-3             # 1 ns: touching intervals do not overlap


def is_host_copy(g) -> bool:
    """True for a memcpy between host and device memory (judged against the host link)."""
    return g.cat == MEMCPY and _HOST_RX.search(g.name) is not None


def overlapped_uids(gpu_events) -> set:
    """uids of GPU events whose interval overlaps another event's on the same device.

    Per device, sorted by start: event i overlaps an earlier one when it starts before the
    running maximum of the earlier ends, and a later one when it ends after the next start.
    """
    by_dev: dict = {}
    for g in gpu_events:
        by_dev.setdefault(g.device, []).append(g)
    out: set = set()
    for evs in by_dev.values():
        n = len(evs)
        if n < 2:
            continue
        s = np.fromiter((g.ts for g in evs), dtype=np.float64, count=n)
        e = s + np.fromiter((g.dur for g in evs), dtype=np.float64, count=n)
        o = np.argsort(s, kind="stable")
        s, e = s[o], e[o]
        hit = np.zeros(n, dtype=bool)
        hit[1:] |= s[1:] < np.maximum.accumulate(e)[:-1] - _EPS_US
        hit[:-1] |= e[:-1] > s[1:] + _EPS_US
        out.update(evs[i].uid for i in o[np.flatnonzero(hit)].tolist())
    return out


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
    lo, hi = s[m - 1:n - m], s[m:n - m + 1]          # pairs (s[i], s[i+1]) with m <= i+1 <= n-m
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
    return (f"{BIMODAL}: {len(fast)} instances near {np.median(fast):.3g} µs and {len(slow)} near "
            f"{np.median(slow):.3g} µs")


def above_roofline_causes(*, n_above: int, n: int, nbytes: float | None, llc_bytes: int | None,
                          category: str, bound: str | None, overlap_share: float,
                          pct_min: float | None, assumptions: list[str], model: str) -> str:
    """The ``above roofline`` flag: how many instances, and every likely cause that applies."""
    causes = []
    if "attention" in category.lower() or category.startswith("SDPA"):
        causes.append("attention with a sliding window, sparsity or KV-cache reuse the model "
                      "does not know (it charges the full context)")
    if nbytes is not None and llc_bytes and nbytes <= llc_bytes:
        causes.append(f"operands ({nbytes / 1e6:.3g} MB per call) fit in the "
                      f"{llc_bytes / 2**20:.0f} MiB last-level cache: hits beat the HBM roofline")
    if overlap_share >= OVERLAP_MIN_SHARE:
        causes.append(f"{100 * overlap_share:.0f}% of its kernel time is in kernels overlapping other GPU work, "
                      "so the per-call time does not isolate its traffic")
    if assumptions and pct_min is not None and pct_min <= 100.0:
        causes.append(f"within roofline at the assumption's lower bound ({pct_min:.0f}%)")
    if not causes:
        causes.append(f"no known cause: check {model}'s bytes and FLOPs")
    return f"{ABOVE}: {n_above} of {n} instances above 100%; likely " + "; or ".join(causes)


def host_link_text(gbps: float) -> str:
    return f"{HOST_LINK}: host<->device copy judged against the {gbps:g} GB/s host link, not HBM"


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


__all__ = ["ABOVE", "BIMODAL", "ASSUMPTION", "HOST_LINK", "TAGS", "SEP", "is_host_copy",
           "overlapped_uids", "bimodal_cut", "split_key", "bimodal_text", "above_roofline_causes",
           "host_link_text", "assumption_texts", "tag_of", "join_flags", "split_flags"]
