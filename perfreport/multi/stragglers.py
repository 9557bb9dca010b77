"""``stragglers_by_step``: per step, which rank reached the collectives last, and by how much.

Each matched collective call of the ``collectives`` sheet has a straggler (the rank whose kernel
started last) and a start skew (last start − first start, on one clock). A call belongs to the
step (:mod:`perfreport.tree.steps`) of its straggler rank whose CPU range holds that rank's
launch of the call (the ``record_param_comms`` op's start, or the kernel's when read from kernel
args). Per step:

* collective calls = matched calls in the step; straggler rank = the rank last most often (ties:
  the larger summed skew, then the lower rank); times last = how many of the step's calls it
  was last in;
* skew sum / max = over the step's calls; straggler skew = the skew summed over the calls where
  that rank was last: the time the other ranks waited on it in that step.

Calls whose launch lies in no step of their straggler rank are counted in a row ``(no step)``.
"""

from __future__ import annotations

from collections import Counter, defaultdict

from perfreport.tables import columns as C
from perfreport.tables.sheet import Sheet

NO_STEP = "(no step)"


def _call_positions(calls: list[dict]) -> dict:
    """{(pg, seq or n-th position): cpu start} of one rank's calls."""
    out = {}
    nth: Counter = Counter()
    for c in sorted(calls, key=lambda c: c.get("cpu_ts") or 0.0):
        pg = str(c.get("pg"))
        nth[pg] += 1
        seq = c.get("seq")
        out[(pg, seq if seq is not None else nth[pg])] = c.get("cpu_ts")
    return out


def _step_of(steps: list, t) -> object:
    if t is None:
        return NO_STEP
    for number, ts, end in steps:
        if ts <= t < end:
            return number
    return NO_STEP


def stragglers_by_step(ranked, collectives: Sheet) -> Sheet | None:
    """``ranked``: [(rank, path, RankResult)]; None when no rank has steps."""
    by_rank = {rank: r for rank, _, r in ranked}
    if not any(r.steps for r in by_rank.values()):
        return None
    pos = {rank: _call_positions(r.calls) for rank, r in by_rank.items()}
    groups: dict = defaultdict(list)
    for row in collectives.records():
        rk, skew = row[C.STRAGGLER_RANK], row[C.START_SKEW_US]
        if rk is None or skew is None or rk not in by_rank:
            continue
        t = pos[rk].get((str(row[C.PROCESS_GROUP]), row[C.SEQ]))
        groups[_step_of(by_rank[rk].steps, t)].append((rk, float(skew)))
    rows = []
    for step in sorted(groups, key=lambda s: (s == NO_STEP, s if s != NO_STEP else 0)):
        calls = groups[step]
        last = Counter(rk for rk, _ in calls)
        skew_of: Counter = Counter()
        for rk, sk in calls:
            skew_of[rk] += sk
        top = min(last, key=lambda rk: (-last[rk], -skew_of[rk], rk))
        rows.append(
            {
                C.STEP: step,
                C.COLLECTIVE_CALLS: len(calls),
                C.STRAGGLER_RANK: top,
                C.TIMES_LAST: last[top],
                C.SKEW_SUM_US: sum(sk for _, sk in calls),
                C.SKEW_MAX_US: max(sk for _, sk in calls),
                C.STRAGGLER_SKEW_US: skew_of[top],
            }
        )
    cols = [
        C.STEP,
        C.COLLECTIVE_CALLS,
        C.STRAGGLER_RANK,
        C.TIMES_LAST,
        C.SKEW_SUM_US,
        C.SKEW_MAX_US,
        C.STRAGGLER_SKEW_US,
    ]
    notes = [
        "a call belongs to the step of its straggler rank that holds that rank's launch of it; straggler "
        "skew = the skew of the calls where that rank was last (the time the others waited on it)"
    ]
    return Sheet.from_records("stragglers_by_step", rows, cols, C.formats(cols), notes)


__all__ = ["stragglers_by_step", "NO_STEP"]
