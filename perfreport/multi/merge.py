"""The merged multi-rank report: ``ranks``, ``ops_by_rank``, ``gpu_timeline_by_rank``,
``collectives``.

Built only from the compact :class:`~perfreport.multi.worker.RankResult` values, sorted by
rank, so every engine gives the same sheets byte for byte (tested).

* ``ops_by_rank``: per op (name, category, input dims, input types, as in
  ``unified_perf_summary``) the GPU time on each rank (0 where a rank did not run it), min /
  median / max over ranks, the slowest rank and max / median;
* ``gpu_timeline_by_rank``: each rank's ``gpu_timeline`` rows with its rank;
* ``collectives``: see :mod:`perfreport.multi.collectives`; busbw is set against the spec's
  per-direction GPU link figure (``interconnect.link_per_direction_GBps``).
Per-rank columns (``rank r ...``) are written for up to :data:`RANK_COLUMNS` ranks.
"""

from __future__ import annotations

import statistics

from perfreport.multi.collectives import match_calls, rank_offsets_us
from perfreport.multi.worker import OP_KEY, RankResult
from perfreport.tables.sheet import INT, PCT, US, Sheet

RANK_COLUMNS = 16


def ranks_sheet(ranked: list[tuple[int, str, RankResult]]) -> Sheet:
    rows = []
    for rank, src, r in ranked:
        tl = {row[1]: row[2] for row in r.timeline}
        rows.append(
            {
                "rank": rank,
                "rank from": src,
                "trace": r.path,
                "GPU": r.devices,
                "GPU spec": r.spec_key or "",
                "world size": r.world_size,
                "kernel time (µs)": float(sum(o[5] or 0.0 for o in r.ops)),
                "modelled (%)": r.coverage["modelled (%)"] if r.coverage else None,
                "busy (ms)": tl.get("busy"),
                "total (ms)": tl.get("total"),
                "computation (ms)": tl.get("computation"),
                "exposed comm (ms)": tl.get("exposed comm"),
                "idle (ms)": tl.get("idle"),
                "collective calls": len(r.calls),
                "per-rank report": r.per_rank_report or "",
            }
        )
    cols = list(rows[0]) if rows else ["rank"]
    fm = {c: US for c in cols if "(µs)" in c} | {c: "0.000" for c in cols if "(ms)" in c} | {"modelled (%)": PCT}
    return Sheet.from_records("ranks", rows, cols, fm)


def ops_by_rank(ranked) -> Sheet:
    ranks = [rank for rank, _, _ in ranked]
    times: dict = {}
    counts: dict = {}
    for rank, _, r in ranked:
        for o in r.ops:
            key = tuple("" if v is None else v for v in o[:4])
            times.setdefault(key, {})[rank] = times.get(key, {}).get(rank, 0.0) + float(o[5] or 0.0)
            counts.setdefault(key, {})[rank] = counts.get(key, {}).get(rank, 0) + int(o[4] or 0)
    per_rank = len(ranks) <= RANK_COLUMNS
    rows = []
    for key, by in times.items():
        t = [by.get(rk, 0.0) for rk in ranks]
        med = float(statistics.median(t))
        mx = max(t)
        slow = ranks[t.index(mx)]
        r = dict(zip(OP_KEY, key))
        r.update(
            {
                "ranks with it": len(by),
                "count max": max(counts[key].values()),
                "time min (µs)": min(t),
                "time median (µs)": med,
                "time max (µs)": mx,
                "time sum (µs)": float(sum(t)),
                "slowest rank": slow,
                "max / median": mx / med if med > 0 else None,
            }
        )
        if per_rank:
            for rk, v in zip(ranks, t):
                r[f"rank {rk} (µs)"] = v
        rows.append(r)
    rows.sort(key=lambda r: (-r["time max (µs)"], r["name"], r["input dims"], r["input types"], r["category"]))
    cols = list(OP_KEY) + [
        "ranks with it",
        "count max",
        "time min (µs)",
        "time median (µs)",
        "time max (µs)",
        "time sum (µs)",
        "slowest rank",
        "max / median",
    ]
    if per_rank:
        cols += [f"rank {rk} (µs)" for rk in ranks]
    notes = ["time = GPU kernel time of the op's unified_perf_summary rows on that rank (0: not run there)"]
    if not per_rank:
        notes.append(f"more than {RANK_COLUMNS} ranks: per-rank columns left out (see the per-rank reports)")
    return Sheet.from_records(
        "ops_by_rank",
        rows,
        cols,
        {c: US for c in cols if "(µs)" in c}
        | {"ranks with it": INT, "count max": INT, "slowest rank": INT, "max / median": "0.000"},
        notes,
    )


def timeline_by_rank(ranked) -> Sheet:
    rows = [[rank] + list(row) for rank, _, r in ranked for row in r.timeline]
    return Sheet(
        "gpu_timeline_by_rank",
        ["rank", "device", "type", "time (ms)", "percent of total (%)"],
        rows,
        {"time (ms)": "0.000", "percent of total (%)": PCT},
        ["each rank's gpu_timeline (see docs/analyze.md)"],
    )


def collectives_sheet(ranked, link) -> Sheet:
    """``link``: (per-direction GB/s, description) of the GPU-to-GPU link, or None."""
    per = {rank: r.calls for rank, _, r in ranked}
    offsets, clock_note = rank_offsets_us({rank: r.base_ns for rank, _, r in ranked})
    rows, notes = match_calls(per, offsets)
    ranks = sorted(per)
    per_rank = len(ranks) <= RANK_COLUMNS
    t0 = min((r["first start (µs)"] for r in rows if r["first start (µs)"] is not None), default=0.0)
    for r in rows:
        starts, times = r.pop("_starts"), r.pop("_times")
        if r["first start (µs)"] is not None:
            r["first start (µs)"] -= t0
        bw = r.get("busbw (GB/s)")
        r["link (GB/s per direction)"] = link[0] if link else None
        r["busbw of link (%)"] = 100.0 * bw / link[0] if link and bw is not None else None
        if per_rank:
            first = min(starts.values()) if starts else None
            for rk in ranks:
                r[f"rank {rk} arrival (µs)"] = starts[rk] - first if rk in starts else None
                r[f"rank {rk} time (µs)"] = times.get(rk)
    rows.sort(
        key=lambda r: (r["first start (µs)"] is None, r["first start (µs)"] or 0.0, r["process group"], str(r["seq"]))
    )
    cols = [
        "process group",
        "pg description",
        "seq",
        "collective",
        "dtype",
        "group size",
        "ranks seen",
        "in msg nelems",
        "out msg nelems",
        "message size (B)",
        "first start (µs)",
        "start skew (µs)",
        "straggler rank",
        "time min (µs)",
        "time median (µs)",
        "time max (µs)",
        "transfer time (µs)",
        "algbw (GB/s)",
        "busbw factor",
        "busbw (GB/s)",
        "link (GB/s per direction)",
        "busbw of link (%)",
    ]
    if per_rank:
        cols += [c for rk in ranks for c in (f"rank {rk} arrival (µs)", f"rank {rk} time (µs)")]
    notes += [
        clock_note,
        "skew = max - min kernel start; straggler = last to start; transfer time = max end - "
        "max start; algbw = message size / transfer time; busbw = algbw x nccl-tests factor "
        "(all-reduce 2(n-1)/n; all-gather, reduce-scatter, all-to-all (n-1)/n; others 1)",
        f"link: {link[1]}" if link else "link: the GPU spec has no interconnect figure",
    ]
    from_kernels = sum(1 for _, _, r in ranked for c in r.calls if c.get("source") == "kernel")
    if from_kernels:
        notes.append(
            f"{from_kernels} calls (over all ranks) read from NCCL/RCCL kernel args: "
            "no record_param_comms op launched them"
        )
    short = [r for r in rows if r["ranks seen"] < r["group size"]]
    if short:
        notes.append(
            f"{len(short)} calls were seen on fewer ranks than their group size "
            "(trace windows differ, or not every rank's trace was given)"
        )
    fm = {c: US for c in cols if "(µs)" in c} | {
        "message size (B)": INT,
        "algbw (GB/s)": "0.000",
        "busbw (GB/s)": "0.000",
        "busbw factor": "0.000",
        "link (GB/s per direction)": "0.0",
        "busbw of link (%)": PCT,
    }
    return Sheet.from_records("collectives", rows, cols, fm, notes)


def merged_sheets(ranked: list[tuple[int, str, RankResult]], link=None) -> list[Sheet]:
    ranked = sorted(ranked, key=lambda x: x[0])
    sheets = [ranks_sheet(ranked), ops_by_rank(ranked), timeline_by_rank(ranked)]
    if any(r.calls for _, _, r in ranked):
        sheets.append(collectives_sheet(ranked, link))
    return sheets


__all__ = ["merged_sheets", "RANK_COLUMNS"]
