"""Which traces a multi-rank run reads, and which rank each one is.

Inputs: a directory (its ``*.json`` / ``*.json.gz`` files, not recursing), files, or glob
patterns (expanded here when the shell did not). The rank comes from the trace's
``distributedInfo.rank`` (the only reliable source); else from the file name
(``rank3``, ``rank-3``, ``rank_3``, ``RANK.3``); else from the position in the sorted list.
The report's notes say which.
"""

from __future__ import annotations

import glob
import re
from pathlib import Path

from perfreport.errors import BadInput

RANK_RX = re.compile(r"rank[_\-.]?(\d+)", re.I)
TRACE_SUFFIXES = (".json", ".json.gz")
_REPORT_SUFFIXES = ("_perf_report.json",)


def _is_trace_name(p: Path) -> bool:
    n = p.name
    return n.endswith(TRACE_SUFFIXES) and not n.endswith(_REPORT_SUFFIXES) and not n.startswith(".")


def expand_inputs(args: list[str]) -> list[str]:
    """The trace paths named by ``args``, each once, in the given order (dirs and globs sorted)."""
    seen, uniq = set(), []
    for x in named_traces(args):
        k = str(Path(x).resolve())
        if k not in seen:
            seen.add(k)
            uniq.append(x)
    return uniq


def named_traces(args: list[str]) -> list[str]:
    """The trace paths named by ``args``, repeats kept (dirs and globs sorted)."""
    out: list[str] = []
    for a in args:
        p = Path(a)
        if p.is_dir():
            hits = sorted(str(q) for q in p.iterdir() if q.is_file() and _is_trace_name(q))
            if not hits:
                raise BadInput(a, "directory holds no .json or .json.gz traces")
            out.extend(hits)
        elif p.exists() or a == "-":
            if a == "-":
                raise BadInput(a, "stdin cannot be one of several traces")
            out.append(a)
        elif glob.has_magic(a):
            hits = sorted(glob.glob(a))
            if not hits:
                raise BadInput(a, "no file matches this pattern")
            out.extend(hits)
        else:
            raise BadInput(a, "no such file")
    return out


def rank_from_name(path: str) -> int | None:
    m = RANK_RX.findall(Path(path).name)
    return int(m[-1]) if m else None


def assign_ranks(found: list[tuple[str, int | None, str]]) -> list[tuple[str, int, str]]:
    """``(path, rank or None, source)`` per trace -> every trace with a distinct rank.

    Traces without a rank take the lowest free ranks in input order ("position")."""
    taken: dict[int, str] = {}
    for path, rank, _ in found:
        if rank is None:
            continue
        if rank in taken:
            raise BadInput(path, f"rank {rank} is also the rank of {taken[rank]}")
        taken[rank] = path
    out = []
    nxt = 0
    for path, rank, src in found:
        if rank is None:
            while nxt in taken:
                nxt += 1
            rank, src = nxt, "position in the input list"
            taken[rank] = path
        out.append((path, rank, src))
    return out


__all__ = ["expand_inputs", "named_traces", "rank_from_name", "assign_ranks", "is_multi", "default_merged_output"]


def is_multi(args: list[str]) -> bool:
    """True when ``analyze`` was given several traces, a directory, or an unexpanded glob."""
    if len(args) != 1:
        return True
    a = args[0]
    return a != "-" and (Path(a).is_dir() or (not Path(a).exists() and glob.has_magic(a)))


def default_merged_output(args: list[str]) -> Path:
    """``<dir>_merged_perf_report.xlsx`` beside a directory input, else
    ``merged_perf_report.xlsx`` beside the first trace."""
    p = Path(args[0])
    if len(args) == 1 and p.is_dir():
        p = p.resolve()
        return p.parent / f"{p.name}_merged_perf_report.xlsx"
    return (p.parent if not glob.has_magic(args[0]) else Path(".")) / "merged_perf_report.xlsx"
