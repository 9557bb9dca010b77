"""Stage 5: tables. :func:`build_sheets` turns a tree (after passes) into report sheets.

Perf sheets (``unified_perf_summary`` and one sheet per perf category) are built by
:mod:`perfreport.tables.perf` from the models in :mod:`perfreport.models.registry`.
"""

from __future__ import annotations

from perfreport.tables.conservation import check_conservation, check_total
from perfreport.tables.kernels import kernel_summary, short_kernels
from perfreport.tables.op_times import OpTimes, gpu_time
from perfreport.tables.ops import ops_summary, ops_summary_by_category, ops_unique_args
from perfreport.tables.sheet import Sheet
from perfreport.tables.timeline import gpu_timeline


def build_sheets(
    tree, *, short_kernel_us: float = 10.0, include_unlinked: bool = True, spec=None, perf: bool = True
) -> list[Sheet]:
    return build_tables(tree, short_kernel_us=short_kernel_us, include_unlinked=include_unlinked, spec=spec, perf=perf)[
        0
    ]


def build_tables(tree, *, short_kernel_us: float = 10.0, include_unlinked: bool = True, spec=None, perf: bool = True):
    """(sheets, coverage): the report's sheets and its :class:`~perfreport.tables.coverage.Coverage`
    (None when ``perf`` is False)."""
    times = OpTimes(tree)
    sheets: list[Sheet] = []
    tl = gpu_timeline(tree, include_unlinked=include_unlinked)
    sheets.append(tl)
    total = 1000.0 * sum(r[2] for r in tl.rows if r[1] == "total")
    summ = ops_summary(tree, times)
    sheets.append(ops_summary_by_category(summ, tree))
    sheets.append(summ)
    sheets.append(ops_unique_args(tree, times))
    if tree.gpu:
        sheets.append(kernel_summary(tree, total))
        sheets.append(short_kernels(tree, total, short_kernel_us))
    coverage = None
    if perf:
        from perfreport.tables.perf import perf_tables

        perf_s, coverage = perf_tables(tree, times, spec)
        sheets.extend(perf_s)
    check_conservation(sheets, tree)  # every GPU event counted once, or InternalError
    if coverage is not None and tree.gpu:
        check_total("coverage split", coverage.parts_us, gpu_time(tree))
    return sheets, coverage


__all__ = ["build_sheets", "build_tables", "Sheet", "OpTimes"]
