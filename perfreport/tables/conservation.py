"""Conservation checks: every GPU event's time is counted exactly once.

Checked on every report (:func:`check_conservation`, called by
:func:`perfreport.tables.build_sheets`); a failure is a bug, raised as
:class:`~perfreport.errors.InternalError` (exit 1 from the CLI) naming the difference, never
a silent report. With G = Σ of the GPU events' stream time (kernels, memcpy, memset; overlap
on one stream counted once, see :mod:`perfreport.tables.op_times`):

* Σ ``unified_perf_summary`` time = G
* Σ ``kernel_summary`` sum = G
* Σ ``ops_summary`` direct time over op rows = linked GPU time, and its
  ``(unlinked GPU events)`` row = unlinked GPU time
* Σ ``ops_summary_by_category`` = G

all to :data:`REL_TOL` relative. :func:`check_total` is the one comparison, for other
sheets' splits (e.g. a coverage statement) to reuse.
"""

from __future__ import annotations

from perfreport.errors import InternalError
from perfreport.tables.op_times import gpu_time, kernel_time
from perfreport.tables import columns as C

REL_TOL = 1e-6


def check_total(what: str, got: float, want: float, rel: float = REL_TOL) -> None:
    """Raise :class:`InternalError` unless ``got`` equals ``want`` to ``rel`` relative
    (absolute 1e-9 µs near zero)."""
    diff = got - want
    if abs(diff) > max(rel * max(abs(got), abs(want)), 1e-9):
        raise InternalError(
            f"conservation check failed: {what} sums to {got:.6f} µs, expected "
            f"{want:.6f} µs (difference {diff:+.6f} µs)"
        )


def _column_sum(sheet, column: str, skip=None) -> float:
    i = sheet.columns.index(column)
    j = sheet.columns.index(C.NAME) if skip is not None else -1
    return float(sum((r[i] or 0.0) for r in sheet.rows if j < 0 or r[j] != skip))


def check_conservation(sheets, tree) -> None:
    """Check the sums above on the sheets that are present (see the module docstring).

    Traces without GPU events have nothing to conserve (their tables use CPU time).
    """
    if not tree.gpu:
        return
    from perfreport.tables.ops import UNLINKED

    by = {s.name: s for s in sheets}
    total = gpu_time(tree)  # kernel_time(tree.gpu), gathered at once
    unlinked = kernel_time([g for g in tree.gpu if g.launcher is None])
    s = by.get("unified_perf_summary")
    if s is not None:
        check_total("unified_perf_summary time", _column_sum(s, C.TIME_SUM_US), total)
    s = by.get("kernel_summary")
    if s is not None:
        check_total("kernel_summary", _column_sum(s, C.SUM_US), total)
    s = by.get("ops_summary")
    if s is not None:
        col = C.DIRECT_KERNEL_TIME_US
        check_total("ops_summary direct time of ops", _column_sum(s, col, skip=UNLINKED), total - unlinked)
        check_total("ops_summary direct time", _column_sum(s, col), total)
    s = by.get("ops_summary_by_category")
    if s is not None:
        check_total("ops_summary_by_category", _column_sum(s, C.DIRECT_KERNEL_TIME_US), total)


__all__ = ["check_conservation", "check_total", "REL_TOL"]
