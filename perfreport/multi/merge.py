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
from perfreport.multi.overlap import rank_comm_overlap
from perfreport.multi.stragglers import stragglers_by_step
from perfreport.multi.worker import OP_KEY, RankResult
from perfreport.tables.columns import INT, PCT, US
from perfreport.tables.sheet import Sheet
from perfreport.tables import columns as C

RANK_COLUMNS = 16


def ranks_sheet(ranked: list[tuple[int, str, RankResult]]) -> Sheet:
    rows = []
    for rank, src, r in ranked:
        tl = {row[1]: row[2] for row in r.timeline}
        rows.append(
            {
                C.RANK: rank,
                C.RANK_FROM: src,
                C.TRACE: r.path,
                C.GPU: r.devices,
                C.GPU_SPEC: r.spec_key or "",
                C.WORLD_SIZE: r.world_size,
                C.KERNEL_TIME_US: float(sum(o[5] or 0.0 for o in r.ops)),
                C.MODELLED_PCT: r.coverage[C.MODELLED_PCT] if r.coverage else None,
                C.BUSY_MS: tl.get("busy"),
                C.TOTAL_MS: tl.get("total"),
                C.COMPUTATION_MS: tl.get("computation"),
                C.EXPOSED_COMM_MS: tl.get("exposed comm"),
                **rank_comm_overlap(r.timeline),
                C.IDLE_MS: tl.get("idle"),
                C.COLLECTIVE_CALLS: len(r.calls),
                C.PER_RANK_REPORT: r.per_rank_report or "",
            }
        )
    cols = list(rows[0]) if rows else [C.RANK]
    fm = {c: US for c in cols if "(µs)" in c} | {c: "0.000" for c in cols if "(ms)" in c}
    fm |= {C.MODELLED_PCT: PCT, C.COMM_OVERLAPPED_PCT: PCT}
    notes = [
        f"{C.COMM_OVERLAPPED_PCT}: share of the rank's communication-kernel time during which computation ran "
        "on its GPU = (communication - exposed comm) / communication (docs/multi.md)"
    ]
    return Sheet.from_records("ranks", rows, cols, fm, notes)


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
                C.RANKS_WITH_IT: len(by),
                C.COUNT_MAX: max(counts[key].values()),
                C.TIME_MIN_US: min(t),
                C.TIME_MEDIAN_US: med,
                C.TIME_MAX_US: mx,
                C.TIME_SUM_US: float(sum(t)),
                C.SLOWEST_RANK: slow,
                C.MAX_PER_MEDIAN: mx / med if med > 0 else None,
            }
        )
        if per_rank:
            for rk, v in zip(ranks, t):
                r[C.rank_time(rk)] = v
        rows.append(r)
    rows.sort(key=lambda r: (-r[C.TIME_MAX_US], r[C.NAME], r[C.INPUT_DIMS], r[C.INPUT_TYPES], r[C.CATEGORY]))
    cols = list(OP_KEY) + [
        C.RANKS_WITH_IT,
        C.COUNT_MAX,
        C.TIME_MIN_US,
        C.TIME_MEDIAN_US,
        C.TIME_MAX_US,
        C.TIME_SUM_US,
        C.SLOWEST_RANK,
        C.MAX_PER_MEDIAN,
    ]
    if per_rank:
        cols += [C.rank_time(rk) for rk in ranks]
    notes = ["time = GPU kernel time of the op's unified_perf_summary rows on that rank (0: not run there)"]
    if not per_rank:
        notes.append(f"more than {RANK_COLUMNS} ranks: per-rank columns left out (see the per-rank reports)")
    return Sheet.from_records(
        "ops_by_rank",
        rows,
        cols,
        {c: US for c in cols if "(µs)" in c}
        | {C.RANKS_WITH_IT: INT, C.COUNT_MAX: INT, C.SLOWEST_RANK: INT, C.MAX_PER_MEDIAN: "0.000"},
        notes,
    )


def timeline_by_rank(ranked) -> Sheet:
    rows = [[rank] + list(row) for rank, _, r in ranked for row in r.timeline]
    return Sheet(
        "gpu_timeline_by_rank",
        [C.RANK, C.DEVICE, C.TYPE, C.TIME_MS, C.PERCENT_OF_TOTAL_PCT],
        rows,
        {C.TIME_MS: "0.000", C.PERCENT_OF_TOTAL_PCT: PCT},
        ["each rank's gpu_timeline (see docs/analyze.md)"],
    )


def collectives_sheet(ranked, link) -> Sheet:
    """``link``: (per-direction GB/s, description) of the GPU-to-GPU link, or None."""
    per = {rank: r.calls for rank, _, r in ranked}
    offsets, clock_note = rank_offsets_us({rank: r.base_ns for rank, _, r in ranked})
    rows, notes = match_calls(per, offsets)
    ranks = sorted(per)
    per_rank = len(ranks) <= RANK_COLUMNS
    t0 = min((r[C.FIRST_START_US] for r in rows if r[C.FIRST_START_US] is not None), default=0.0)
    for r in rows:
        starts, times = r.pop("_starts"), r.pop("_times")
        if r[C.FIRST_START_US] is not None:
            r[C.FIRST_START_US] -= t0
        bw = r.get(C.BUSBW_GB_PER_S)
        r[C.LINK_GB_PER_S_PER_DIRECTION] = link[0] if link else None
        r[C.BUSBW_OF_LINK_PCT] = 100.0 * bw / link[0] if link and bw is not None else None
        if per_rank:
            first = min(starts.values()) if starts else None
            for rk in ranks:
                r[C.rank_arrival(rk)] = starts[rk] - first if rk in starts else None
                r[C.rank_call_time(rk)] = times.get(rk)
    rows.sort(
        key=lambda r: (r[C.FIRST_START_US] is None, r[C.FIRST_START_US] or 0.0, r[C.PROCESS_GROUP], str(r[C.SEQ]))
    )
    cols = [
        C.FOUND_BY,
        C.PROCESS_GROUP,
        C.PG_DESCRIPTION,
        C.SEQ,
        C.COLLECTIVE,
        C.DTYPE,
        C.GROUP_SIZE,
        C.RANKS_SEEN,
        C.IN_MSG_NELEMS,
        C.OUT_MSG_NELEMS,
        C.MESSAGE_SIZE_B,
        C.FIRST_START_US,
        C.START_SKEW_US,
        C.STRAGGLER_RANK,
        C.TIME_MIN_US,
        C.TIME_MEDIAN_US,
        C.TIME_MAX_US,
        C.TRANSFER_TIME_US,
        C.ALGBW_GB_PER_S,
        C.BUSBW_FACTOR,
        C.BUSBW_GB_PER_S,
        C.LINK_GB_PER_S_PER_DIRECTION,
        C.BUSBW_OF_LINK_PCT,
    ]
    if per_rank:
        cols += [c for rk in ranks for c in (C.rank_arrival(rk), C.rank_call_time(rk))]
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
    short = [r for r in rows if r[C.RANKS_SEEN] < r[C.GROUP_SIZE]]
    if short:
        notes.append(
            f"{len(short)} calls were seen on fewer ranks than their group size "
            "(trace windows differ, or not every rank's trace was given)"
        )
    fm = {c: US for c in cols if "(µs)" in c} | {
        C.MESSAGE_SIZE_B: INT,
        C.ALGBW_GB_PER_S: "0.000",
        C.BUSBW_GB_PER_S: "0.000",
        C.BUSBW_FACTOR: "0.000",
        C.LINK_GB_PER_S_PER_DIRECTION: "0.0",
        C.BUSBW_OF_LINK_PCT: PCT,
    }
    return Sheet.from_records("collectives", rows, cols, fm, notes)


def merged_sheets(ranked: list[tuple[int, str, RankResult]], link=None) -> list[Sheet]:
    ranked = sorted(ranked, key=lambda x: x[0])
    sheets = [ranks_sheet(ranked), ops_by_rank(ranked), timeline_by_rank(ranked)]
    if any(r.calls for _, _, r in ranked):
        coll = collectives_sheet(ranked, link)
        sheets.append(coll)
        by_step = stragglers_by_step(ranked, coll)
        if by_step is not None:
            sheets.append(by_step)
    return sheets


__all__ = ["merged_sheets", "RANK_COLUMNS"]
