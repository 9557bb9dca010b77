"""Stage 5: tables. :func:`build_sheets` turns a tree (after passes) into report sheets.

Perf sheets (``unified_perf_summary`` and one sheet per perf category) are built by
:mod:`perfreport.tables.perf` from the models in :mod:`perfreport.models.registry`.
"""

from __future__ import annotations

from perfreport.tables.conservation import check_conservation, check_total
from perfreport.tables.fix_first import fix_first
from perfreport.tables.gpu_arrays import gpu_arrays
from perfreport.tables.idle import idle_time
from perfreport.tables.kernels import gpu_parents, kernel_summary, short_kernels
from perfreport.tables.op_times import OpTimes, forget_uids, gpu_time, shared
from perfreport.tables.op_rows import op_rows_at
from perfreport.tables.ops import ops_summary, ops_summary_by_category, ops_unique_args
from perfreport.tables.launches import launch_queue, launch_stats
from perfreport.tables.sheet import Sheet
from perfreport.tables.steps import steps_sheet
from perfreport.tables.timeline import gpu_timeline
from perfreport.tables.lanes import timeline_lanes
from perfreport.tree.steps import find_steps


def build_sheets(
    tree, *, short_kernel_us: float = 10.0, include_unlinked: bool = True, spec=None, perf: bool = True
) -> list[Sheet]:
    return build_tables(tree, short_kernel_us=short_kernel_us, include_unlinked=include_unlinked, spec=spec, perf=perf)[
        0
    ]


def build_tables(
    tree,
    *,
    short_kernel_us: float = 10.0,
    include_unlinked: bool = True,
    spec=None,
    perf: bool = True,
    target_roofline: float = 0.8,
    steps_note: str | None = None,
    keep: dict | None = None,
):
    """(sheets, coverage): the report's sheets and its :class:`~perfreport.tables.coverage.Coverage`
    (None when ``perf`` is False). ``target_roofline``: the share of roofline the ``fix_first``
    sheet assumes a row could reach; ``steps_note``: what ``--steps`` kept (for the steps sheet);
    ``keep``: a dict that receives ``"timeline"``, the HTML page's time-axis data
    (:func:`perfreport.tables.lanes.timeline_lanes`), when given. The GPU events' uids and
    Σ stream time are gathered once for all the tables (:func:`~perfreport.tables.op_times.shared`)."""
    with shared(tree.gpu):
        return _build(tree, short_kernel_us, include_unlinked, spec, perf, target_roofline, steps_note, keep)


def _build(tree, short_kernel_us, include_unlinked, spec, perf, target_roofline, steps_note, keep):
    sheets: list[Sheet] = []
    tl = gpu_timeline(tree, include_unlinked=include_unlinked)
    sheets.append(tl)
    # the between-the-kernels sheets first (their GPU arrays are freed before the other tables
    # are built: a lower peak); fix_first, which reads the perf sheets, last
    between = _between_kernels(tree, include_unlinked, steps_note, keep)
    times = OpTimes(tree)
    total = 1000.0 * sum(r[2] for r in tl.rows if r[1] == "total")
    rows, rows_uids = op_rows_at(tree, times)  # the ops both op sheets read (their uids and name codes once)
    with shared(rows, rows_uids):
        summ = ops_summary(tree, times, rows)
        sheets.append(ops_summary_by_category(summ, tree, rows, times))
        sheets.append(summ)
        sheets.append(ops_unique_args(tree, times, rows))
    del times, rows  # (two float64 columns per CPU event: freed before the kernel and perf sheets' peaks)
    if tree.gpu:
        parents = gpu_parents(tree)  # both kernel sheets group on it
        sheets.append(kernel_summary(tree, total, parents))
        sheets.append(short_kernels(tree, total, short_kernel_us, parents))
        del parents
    coverage = None
    kept_keys: tuple = ()
    if perf:
        from perfreport.tables.flags import OVERLAP, cross_stream_overlap_us
        from perfreport.tables.perf import FIRST_UNLINKED, _first_unlinked_ts, perf_tables

        if tree.gpu:  # made while the uids are held, kept for the perf sheets over the forget
            cross_stream_overlap_us(tree.gpu)
            _first_unlinked_ts(tree)
        kept_keys = (OVERLAP, FIRST_UNLINKED)
    forget_uids(tree.gpu, kept_keys)  # the perf sheets gather their own: the uids are not held over their peak
    if perf:
        perf_s, coverage = perf_tables(tree, spec)
        sheets.extend(perf_s)
    if between:
        by = {s.name: s for s in sheets}
        idle = between[1]
        first = fix_first(by["gpu_timeline"], by.get("unified_perf_summary"), idle, target_roofline)
        sheets.extend([first, *between])
    check_conservation(sheets, tree)  # every GPU event counted once, or InternalError
    if coverage is not None and tree.gpu:
        check_total("coverage split", coverage.parts_us, gpu_time(tree))
    return sheets, coverage


def _between_kernels(tree, include_unlinked, steps_note, keep=None) -> list[Sheet]:
    """What happens between the kernels: steps, idle split, launches (and, into ``keep``, the
    time-axis timeline's data); ``fix_first`` is made from these and the perf sheets."""
    if not tree.gpu:
        return []
    arr = gpu_arrays(tree, include_unlinked=include_unlinked)
    idle = idle_time(arr)
    found = find_steps(tree)
    steps = steps_sheet(tree, arr, found, note=steps_note)
    if keep is not None:
        keep["timeline"] = timeline_lanes(tree, arr, found, steps.records(), include_unlinked)
    arr.owner_ts = arr.dev = arr.linked = None  # the launch sheets read neither: freed before them
    return [steps, idle, launch_stats(arr), launch_queue(arr)]


__all__ = ["build_sheets", "build_tables", "Sheet", "OpTimes"]
