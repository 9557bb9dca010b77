"""Collective calls: read per rank from the tree, matched across ranks, with bandwidths.

What Kineto records (PyTorch c10d with NCCL/RCCL): a ``record_param_comms`` cpu_op around each
collective call whose args hold ``Collective name``, ``dtype``, ``In msg nelems``,
``Out msg nelems``, ``Group size``, ``Process Group Name``, ``Process Group Description``,
``Process Group Ranks`` and (recent PyTorch) ``Seq``, the process group's sequence number; the
NCCL/RCCL kernel it launches carries the same fields. A call on one rank is the same call on
every rank of its group with the same (process group, ranks, Seq). Without ``Seq`` the n-th
call of a group on each rank is used (said in the notes). Traces without that metadata (older
PyTorch) are read from their ``nccl:*`` annotations, ``c10d::*`` ops and NCCL/RCCL kernel names:
:mod:`perfreport.multi.inferred_calls`.

Per matched call (``start``/``end``: the call's GPU kernels on that rank, on one clock, see
:func:`rank_offsets_us`):

* skew = max start − min start; the straggler is the rank that started last;
* transfer time = max end − max start: from the last arrival, when the data can move, to the
  last completion (the waiting of earlier ranks is not transfer);
* message size S = max(in, out) elements × element size: the full buffer, as nccl-tests count
  it (all-gather: the gathered output; reduce-scatter: the input);
* algorithm bandwidth = S / transfer time; bus bandwidth = algbw × factor, with the factors of
  nccl-tests ``doc/PERFORMANCE.md`` (https://github.com/NVIDIA/nccl-tests/blob/master/doc/PERFORMANCE.md):
  all-reduce 2(n−1)/n; reduce-scatter, all-gather, all-to-all (n−1)/n; broadcast, reduce,
  send/recv 1. busbw is a per-direction figure, so it is set against the spec's per-direction
  GPU-to-GPU link bandwidth (``interconnect`` in the spec file).
"""

from __future__ import annotations

import statistics

from perfreport.events import CPU_OP
from perfreport.multi.inferred_calls import inferred_calls
from perfreport.tables import columns as C

COMM_OP = "record_param_comms"
FIELDS = {
    "collective": "Collective name",
    "dtype": "dtype",
    "in_nelems": "In msg nelems",
    "out_nelems": "Out msg nelems",
    "group_size": "Group size",
    "pg": "Process Group Name",
    "pg_desc": "Process Group Description",
    "pg_ranks": "Process Group Ranks",
    "seq": "Seq",
}
_ALT = {"pg_desc": ("Process Group Desc",)}


def _norm_coll(name: str) -> str:
    n = str(name or "").lower().replace("_", "")
    for junk in ("base", "coalesced", "intotensor", "tensor"):
        n = n.replace(junk, "")
    return n


def busbw_factor(collective: str, n: int) -> float | None:
    """nccl-tests bus-bandwidth factor for ``collective`` on ``n`` ranks (None: no defined one)."""
    c = _norm_coll(collective)
    if n < 1:
        return None
    if c == "allreduce":
        return 2.0 * (n - 1) / n
    if c in ("reducescatter", "allgather", "alltoall", "alltoallv"):
        return (n - 1) / n
    if c in ("broadcast", "reduce", "send", "recv", "sendrecv"):
        return 1.0
    return None


def _arg(a, key: str):
    v = a.get(FIELDS[key])
    if v is None:
        for alt in _ALT.get(key, ()):
            v = a.get(alt)
            if v is not None:
                break
    return v


def extract_calls(tree) -> list[dict]:
    """One dict per collective call of this trace, in start order: the outermost
    ``record_param_comms`` op of a nest with its subtree's kernels, and every NCCL/RCCL kernel
    carrying collective fields that no such op launched (GPU-only traces, graph replays).
    Times are the trace's own µs."""
    calls = []
    claimed: set = set()
    for o in tree.ops_named(COMM_OP):
        if o.cat != CPU_OP or "Collective name" not in o.args:
            continue
        if any(p.name == COMM_OP for p in o.ancestors()):
            continue
        a = o.args
        ks = o.subtree_kernels()
        c = {k: _arg(a, k) for k in FIELDS}
        c["cpu_ts"] = o.ts
        claimed.update(k.uid for k in ks)
        c["source"] = COMM_OP
        if ks:
            c["start"] = min(k.ts for k in ks)
            c["end"] = max(k.end for k in ks)
            c["kernel_time"] = float(sum(k.dur for k in ks))
            c["kernel"] = ks[0].name
        else:
            c["start"] = c["end"] = c["kernel_time"] = None
            c["kernel"] = ""
        calls.append(c)
    comm = getattr(tree, "gpu_comm_args", None) or {}
    if len(claimed) < len(comm):
        for g in tree.gpu:
            a = comm.get(g.uid)
            if a is None or g.uid in claimed:
                continue
            c = {k: _arg(a, k) for k in FIELDS}
            c.update(cpu_ts=g.ts, start=g.ts, end=g.end, kernel_time=float(g.dur), kernel=g.name, source="kernel")
            claimed.add(g.uid)
            calls.append(c)
    calls += inferred_calls(tree, claimed)
    calls.sort(key=lambda c: (c["start"] if c["start"] is not None else c["cpu_ts"], c["cpu_ts"]))
    by_pg: dict = {}
    for c in calls:  # the n-th call of each group, for traces without Seq
        k = (str(c["pg"]), str(c["pg_ranks"] or ""))
        if c.get("inferred"):  # no process group known: the n-th call of that collective
            k = ("", "", _norm_coll(c["collective"]))
        c["ordinal"] = by_pg[k] = by_pg.get(k, 0) + 1
    return calls


def rank_offsets_us(bases_ns: dict[int, int | None]) -> tuple[dict[int, float], str]:
    """Per rank, µs to add to its ``ts`` to put every rank on one clock: Kineto ``ts`` are
    relative to each trace's ``baseTimeNanoseconds`` (exact integer ns arithmetic here)."""
    known = [b for b in bases_ns.values() if isinstance(b, int)]
    if len(known) != len(bases_ns):
        return {r: 0.0 for r in bases_ns}, ("not every trace has baseTimeNanoseconds: timestamps compared as recorded")
    b0 = min(known)
    return {
        r: (b - b0) / 1000.0 for r, b in bases_ns.items()
    }, "ranks aligned by baseTimeNanoseconds (assumes synchronised host clocks)"


def match_calls(per_rank: dict[int, list[dict]], offsets: dict[int, float]) -> tuple[list[dict], list[str]]:
    """Group calls across ranks by (process group, its ranks, Seq or ordinal)."""
    with_meta = [c for cs in per_rank.values() for c in cs if not c.get("inferred")]
    use_seq = all(c.get("seq") is not None for c in with_meta)
    groups: dict = {}
    for rank in sorted(per_rank):
        for c in per_rank[rank]:
            key = (str(c["pg"]), str(c["pg_ranks"] or ""), c["seq"] if use_seq else c["ordinal"])
            if c.get("inferred"):
                key = ("", _norm_coll(c["collective"]), c["ordinal"])
            groups.setdefault(key, {}).setdefault(rank, c)
    notes = []
    if with_meta:
        notes.append(
            "collectives matched by (process group, ranks, Seq)"
            if use_seq
            else "collectives matched by (process group, ranks, n-th call): the traces have no Seq"
        )
    n_inf = sum(1 for cs in per_rank.values() for c in cs if c.get("inferred"))
    if n_inf:
        notes.append(
            f"{n_inf} calls (over all ranks) have no record_param_comms metadata (older PyTorch): read from "
            "nccl:* annotations, c10d::* ops or NCCL/RCCL kernel names, matched by (collective, n-th call); "
            "message from the annotation's first tensor (all-gather: one rank's shard); group size = ranks "
            "seen (docs/multi.md)"
        )
    return [_call_row(key, by_rank, offsets) for key, by_rank in groups.items()], notes


def _call_row(key, by_rank: dict[int, dict], offsets: dict[int, float]) -> dict:
    from perfreport.models.dtypes import bytes_per_element
    from perfreport.errors import ModelError

    first = by_rank[min(by_rank)]
    starts = {r: c["start"] + offsets[r] for r, c in by_rank.items() if c["start"] is not None}
    ends = {r: c["end"] + offsets[r] for r, c in by_rank.items() if c["end"] is not None}
    times = {r: c["end"] - c["start"] for r, c in by_rank.items() if c["start"] is not None}
    n = int(first["group_size"] or len(by_rank))
    try:
        esize = bytes_per_element(str(first["dtype"]))
    except ModelError:
        esize = None
    nel = max(int(first["in_nelems"] or 0), int(first["out_nelems"] or 0))
    size = None if esize is None else (int(nel * esize) if float(esize).is_integer() else nel * esize)
    row = {
        C.FOUND_BY: first.get("source", COMM_OP),
        C.PROCESS_GROUP: key[0],
        C.PG_DESCRIPTION: first["pg_desc"] or "",
        C.SEQ: key[2],
        C.COLLECTIVE: first["collective"],
        C.DTYPE: first["dtype"],
        C.GROUP_SIZE: n,
        C.RANKS_SEEN: len(by_rank),
        C.IN_MSG_NELEMS: first["in_nelems"],
        C.OUT_MSG_NELEMS: first["out_nelems"],
        C.MESSAGE_SIZE_B: size,
        C.FIRST_START_US: min(starts.values()) if starts else None,
    }
    if starts:
        smax = max(starts.values())
        row[C.START_SKEW_US] = smax - min(starts.values())
        row[C.STRAGGLER_RANK] = max(starts, key=lambda r: (starts[r], r))
        tv = [times[r] for r in sorted(times)]
        row[C.TIME_MIN_US] = min(tv)
        row[C.TIME_MEDIAN_US] = float(statistics.median(tv))
        row[C.TIME_MAX_US] = max(tv)
        xfer = max(ends.values()) - smax
        row[C.TRANSFER_TIME_US] = xfer
        f = busbw_factor(first["collective"], n)
        if size is not None and xfer > 0:
            algbw = size / xfer / 1e3  # B/µs -> GB/s (10^9 B/s)
            row[C.ALGBW_GB_PER_S] = algbw
            row[C.BUSBW_FACTOR] = f
            row[C.BUSBW_GB_PER_S] = algbw * f if f is not None else None
    row["_starts"] = starts
    row["_times"] = times
    return row


__all__ = ["extract_calls", "match_calls", "busbw_factor", "rank_offsets_us", "COMM_OP"]
