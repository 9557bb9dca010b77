"""Every report column once: its name, unit, Excel number format, meaning and source.

The column name is the contract between the stages: the tables build rows keyed by it, the
writers, ``multi`` and ``diff`` read rows back by it, and the workbook's ``columns`` sheet
(:mod:`perfreport.writers.column_docs`) prints the meaning and source kept here. Refer to a
column only through this module, never by a string literal (``tests/tables/test_columns.py``
scans the package for literals)::

    from perfreport.tables import columns as C

    row[C.TIME_SUM_US] = total

Naming convention: the constant is the column name in upper case, its unit in parentheses
written as a suffix (``(µs)`` -> ``_US``, ``(ms)`` -> ``_MS``, ``(%)`` -> ``_PCT``, ``(MB)`` -> ``_MB``,
``(B)`` -> ``_B``), ``%`` elsewhere as ``PCT``, ``/`` as ``PER``, any other punctuation as ``_``:
``time sum (µs)`` is ``TIME_SUM_US``, ``roofline % min`` is ``ROOFLINE_PCT_MIN``, ``FLOP/byte``
is ``FLOP_PER_BYTE``. Columns whose name depends on a value (a model parameter, a rank, a side
of a diff) are built by the functions at the end (:func:`param`, :func:`rank_time`, ...).

:data:`SCHEMA` maps a name to its :class:`Column`. A column with ``meaning`` None has no
definition yet (the ``columns`` sheet says so).
"""

from __future__ import annotations

from perfreport.tables.column_schema import INT, PCT, SCHEMA, US, Column, _col, formats  # noqa: F401 (the schema's API)

_T = "tables/perf.py"
_O = "tables/ops.py"
_K = "tables/kernels.py"
_TL = "tables/timeline.py"
_TRACE = "trace events (ts, dur in µs)"
_SPEC = "GPU spec (perfreport archs; notes sheet)"

# identity
NAME = _col("name", "", "op name (cpu_op), runtime call outside any op, or '(unlinked) <kernel>'", _TRACE)
CATEGORY = _col(
    "category", "", "perf-model category of the op (models/registry.py), or the event kind", "models/registry.py"
)
PERF_MODEL = _col("perf model", "", "class of the perf model evaluated on the row's op", "models/registry.py")
REASON = _col("reason", "", "why the model gave no FLOPs/bytes for this op (empty when it did)", "models/*")
FLAGS = _col(
    "flags",
    "",
    "self-audit findings, ' | '-separated: above roofline (with the likely cause), bimodal (split by kernels or layer parity), assumption (names the unknown), host link",
    "tables/flags.py",
)
COVERAGE = _col(
    "coverage",
    "",
    "'modelled' (the row has a roofline) or why not: no model for the op, model error, no roofline figure, graph replay without shapes, no CPU launch in the window, inside a user annotation only, launched outside any op",
    "tables/coverage.py",
)
DEVICE = _col("device", "", "GPU device id of the events", _TRACE)
TYPE = _col("type", "", "timeline bucket: computation, exposed comm, exposed memcpy, idle, busy, total, ...", _TL)
PARENT_OP = _col("parent op", "", "op that launched the kernel (innermost enclosing cpu_op of its runtime call)", _K)
PARENT_OP_CATEGORY = _col("parent op category", "", "category of the parent op", _K)
KERNEL = _col("kernel", "", "GPU kernel (or memcpy/memset) name", _TRACE)
KERNELS = _col("kernels", "", "kernels the row's ops launched: name × count", _T)
STREAM = _col("stream", "", "GPU stream of the kernel", _TRACE)
COMPUTE_SPEC = _col(
    "compute spec", "", "peak the roofline uses, e.g. matrix_bf16 (tensor cores) or vector_fp32", "models/*"
)
BOUND = _col(
    "bound", "", "which roofline term is larger: compute (FLOP / peak) or memory (bytes / bandwidth)", "specs.roofline"
)

# arguments
INPUT_DIMS = _col("input dims", "", "shapes of the op's inputs as recorded (record_shapes=True)", _TRACE)
INPUT_TYPES = _col("input types", "", "dtypes of the op's inputs", _TRACE)
INPUT_STRIDES = _col("input strides", "", "strides of the op's inputs", _TRACE)
CONCRETE_INPUTS = _col("concrete inputs", "", "scalar arguments as the trace records them", _TRACE)

# counts and times
COUNT = _col("count", "calls", "number of calls (or kernels) grouped in the row", _TRACE, fmt=INT)
TIME_SUM_US = _col(
    "time sum (µs)",
    "µs",
    "Σ over calls of the GPU time of the row's kernels (CPU op time without GPU events)",
    _T,
    fmt=US,
)
TIME_MEAN_US = _col("time mean (µs)", "µs", "time sum / count", _T, fmt=US)
TIME_MEDIAN_US = _col("time median (µs)", "µs", "median of the per-call times", _T, fmt=US)
TIME_STD_US = _col("time std (µs)", "µs", "sample standard deviation of the per-call times (ddof = 1)", _T, fmt=US)
TIME_MIN_US = _col("time min (µs)", "µs", "shortest call", _T, fmt=US)
TIME_MAX_US = _col("time max (µs)", "µs", "longest call", _T, fmt=US)
PERCENT_PCT = _col(
    "percent (%)", "%", "100 × the row's time / all GPU event time in the trace", "tables/sheet.rank", fmt=PCT
)
CUMULATIVE_PERCENT_PCT = _col(
    "cumulative percent (%)", "%", "running sum of percent (%) down the sorted rows", "tables/sheet.rank", fmt=PCT
)
EXAMPLE_TS_US = _col(
    "example ts (µs)", "µs", "start of one instance, to find it in Perfetto / chrome://tracing", _TRACE, fmt=US
)
DIRECT_KERNEL_TIME_US = _col(
    "direct kernel time (µs)", "µs", "Σ GPU time of kernels the op's own runtime calls launched", _O, fmt=US
)
SUBTREE_KERNEL_TIME_US = _col(
    "subtree kernel time (µs)", "µs", "direct kernel time of the op and all its descendants", _O, fmt=US
)
CPU_TIME_US = _col("CPU time (µs)", "µs", "Σ of the op's CPU durations", _O, fmt=US)
DIRECT_KERNEL_TIME_MEAN_US = _col("direct kernel time mean (µs)", "µs", "direct kernel time / count", _O, fmt=US)
DIRECT_KERNEL_TIME_MEDIAN_US = _col(
    "direct kernel time median (µs)", "µs", "median direct kernel time per call", _O, fmt=US
)
DIRECT_KERNEL_TIME_STD_US = _col(
    "direct kernel time std (µs)", "µs", "sample standard deviation of direct kernel time per call", _O, fmt=US
)
DIRECT_KERNEL_TIME_MIN_US = _col("direct kernel time min (µs)", "µs", "shortest call's direct kernel time", _O, fmt=US)
DIRECT_KERNEL_TIME_MAX_US = _col("direct kernel time max (µs)", "µs", "longest call's direct kernel time", _O, fmt=US)
DIRECT_KERNEL_TIME_SUM_US = _col("direct kernel time sum (µs)", "µs", "Σ direct kernel time", _O, fmt=US)
SUBTREE_KERNEL_TIME_SUM_US = _col("subtree kernel time sum (µs)", "µs", "Σ subtree kernel time", _O, fmt=US)
CPU_TIME_MEAN_US = _col("CPU time mean (µs)", "µs", "CPU time / count", _O, fmt=US)
CPU_TIME_SUM_US = _col("CPU time sum (µs)", "µs", "Σ CPU time", _O, fmt=US)
SUM_US = _col("sum (µs)", "µs", "Σ kernel durations", _K, fmt=US)
MEAN_US = _col("mean (µs)", "µs", "sum / count", _K, fmt=US)
MEDIAN_US = _col("median (µs)", "µs", "median kernel duration", _K, fmt=US)
MIN_US = _col("min (µs)", "µs", "shortest kernel", _K, fmt=US)
MAX_US = _col("max (µs)", "µs", "longest kernel", _K, fmt=US)
PERCENT_OF_KERNEL_TIME_PCT = _col("percent of kernel time (%)", "%", "100 × sum / Σ all kernel durations", _K, fmt=PCT)
PERCENT_OF_GPU_TIMELINE_PCT = _col(
    "percent of GPU timeline (%)", "%", "100 × sum / GPU timeline total (first start to last end)", _K, fmt=PCT
)
TIME_MS = _col("time (ms)", "ms", "length of the union of the bucket's intervals", _TL, fmt=US)
PERCENT_OF_TOTAL_PCT = _col(
    "percent of total (%)", "%", "100 × time / total (first start to last end on the device)", _TL, fmt=PCT
)

# work and rates
GFLOP = _col(
    "GFLOP",
    "10^9 FLOP",
    "FLOPs of one call from the perf model (formula in docs/models.md)",
    "models/*",
    fmt="0.000000",
)
DATA_MOVED_MB = _col(
    "data moved (MB)", "10^6 B", "bytes one call must read and write at least, from the perf model", "models/*", fmt=US
)
FLOP_PER_BYTE = _col("FLOP/byte", "FLOP/B", "arithmetic intensity: GFLOP × 1e9 / (data moved (MB) × 1e6)", _T, fmt=PCT)
TFLOP_PER_S_MEAN = _col("TFLOP/s mean", "10^12 FLOP/s", "mean over calls of FLOP / call time", _T, fmt=US)
TB_PER_S_MEAN = _col("TB/s mean", "10^12 B/s", "mean over calls of bytes / call time", _T, fmt=US)

# roofline
ROOFLINE_TIME_US = _col(
    "roofline time (µs)", "µs", "max(FLOP / peak[compute spec], bytes / memory bandwidth)", _SPEC, fmt=US
)
ROOFLINE_TIME_MIN_US = _col(
    "roofline time min (µs)",
    "µs",
    "roofline time with the row's assumptions at their low bounds",
    "models/base.assumptions",
    fmt=US,
)
ROOFLINE_TIME_MAX_US = _col(
    "roofline time max (µs)",
    "µs",
    "roofline time with the row's assumptions at their high bounds",
    "models/base.assumptions",
    fmt=US,
)
ROOFLINE_MEAN_PCT = _col(
    "roofline mean (%)", "%", "mean over calls of 100 × roofline time / call time (100% = at the roofline)", _T, fmt=PCT
)
ROOFLINE_MEDIAN_PCT = _col(
    "roofline median (%)", "%", "median over calls of 100 × roofline time / call time", _T, fmt=PCT
)
ROOFLINE_MIN_PCT = _col("roofline min (%)", "%", "lowest per-call 100 × roofline time / call time", _T, fmt=PCT)
ROOFLINE_MAX_PCT = _col("roofline max (%)", "%", "highest per-call 100 × roofline time / call time", _T, fmt=PCT)
ROOFLINE_STD_PCT = _col(
    "roofline std (%)", "%", "sample standard deviation of the per-call roofline percentages", _T, fmt=PCT
)
ROOFLINE_PCT_MIN = _col(
    "roofline % min",
    "%",
    "roofline % with the row's assumptions at their low bounds",
    "models/base.assumptions",
    fmt=PCT,
)
ROOFLINE_PCT_MAX = _col(
    "roofline % max",
    "%",
    "roofline % with the row's assumptions at their high bounds",
    "models/base.assumptions",
    fmt=PCT,
)


def param(name: str) -> str:
    """The column of a perf-model parameter (``param: <name>``)."""
    return PARAM_PREFIX + name


PARAM_PREFIX = "param: "
# columns defined by their prefix: prefix -> (unit, meaning, source)
PREFIXES: dict[str, tuple[str, str, str]] = {
    PARAM_PREFIX: ("", "a perf-model parameter read from the op's arguments (model docstring names it)", "models/*"),
}

# the self-audit sheet (tables/audit.py)
_AU = "tables/audit.py"
FLAG = _col("flag", "", "kind of flag (the tag before ':' in a row's flags)", _AU)
TIME_AFFECTED_US = _col("time affected (µs)", "µs", "time sum (µs) of the flagged row", _AU, fmt=US)
DETAIL = _col("detail", "", "the flag's text after its tag", _AU)

# the merged multi-rank report (multi/merge.py, multi/collectives.py)
_M = "multi/merge.py"
_MC = "multi/collectives.py"
RANK = _col("rank", "", "rank of the trace (distributedInfo, file name, or order given)", _M)
RANK_FROM = _col("rank from", "", "where the rank was read from", _M)
TRACE = _col("trace", "", "the rank's trace file", _M)
GPU = _col("GPU", "", "GPU devices named in the trace", _M)
GPU_SPEC = _col("GPU spec", "", "key of the GPU spec the rank's roofline uses", _M)
WORLD_SIZE = _col("world size", "ranks", "world size the trace records", _M)
KERNEL_TIME_US = _col("kernel time (µs)", "µs", "Σ time sum (µs) of the rank's unified_perf_summary rows", _M, fmt=US)
MODELLED_PCT = _col(
    "modelled (%)", "%", "share of the rank's GPU time in rows with a roofline", "tables/coverage.py", fmt=PCT
)
BUSY_MS = _col("busy (ms)", "ms", "the rank's gpu_timeline busy time", _TL, fmt=US)
TOTAL_MS = _col("total (ms)", "ms", "the rank's gpu_timeline total (first start to last end)", _TL, fmt=US)
COMPUTATION_MS = _col("computation (ms)", "ms", "the rank's gpu_timeline computation time", _TL, fmt=US)
EXPOSED_COMM_MS = _col("exposed comm (ms)", "ms", "the rank's gpu_timeline exposed communication", _TL, fmt=US)
COMMUNICATION_MS = _col(
    "communication (ms)", "ms", "the rank's gpu_timeline communication: U(NCCL/RCCL kernels)", _TL, fmt=US
)
OVERLAPPED_COMM_MS = _col(
    "overlapped comm (ms)",
    "ms",
    "communication − exposed comm: communication under computation",
    "multi/overlap.py",
    fmt=US,
)
COMM_OVERLAPPED_PCT = _col(
    "comm overlapped (%)", "%", "100 × overlapped comm / communication (docs/multi.md)", "multi/overlap.py", fmt=PCT
)
IDLE_MS = _col("idle (ms)", "ms", "the rank's gpu_timeline idle time", _TL, fmt=US)
COLLECTIVE_CALLS = _col("collective calls", "calls", "collective calls read from the rank's trace", _MC)
PER_RANK_REPORT = _col("per-rank report", "", "path of the rank's own workbook (--per-rank-dir)", _M)
RANKS_WITH_IT = _col("ranks with it", "ranks", "ranks whose trace has the op", _M, fmt=INT)
COUNT_MAX = _col("count max", "calls", "largest count over the ranks", _M, fmt=INT)
SLOWEST_RANK = _col("slowest rank", "", "rank with the largest time", _M, fmt=INT)
MAX_PER_MEDIAN = _col("max / median", "", "time max / time median over the ranks", _M, fmt=US)
FOUND_BY = _col(
    "found by",
    "",
    "where the call was read: record_param_comms, kernel (its args), nccl annotation, c10d op, kernel name",
    "multi/collectives.py, multi/inferred_calls.py",
)
PROCESS_GROUP = _col("process group", "", "process group name of the collective", _MC)
PG_DESCRIPTION = _col("pg description", "", "process group description", _MC)
SEQ = _col("seq", "", "sequence number of the call in its process group (or its ordinal)", _MC)
COLLECTIVE = _col("collective", "", "collective name (record_param_comms or the NCCL/RCCL kernel)", _MC)
DTYPE = _col("dtype", "", "element type of the message", _MC)
GROUP_SIZE = _col("group size", "ranks", "ranks in the process group", _MC)
RANKS_SEEN = _col("ranks seen", "ranks", "ranks whose traces have the call", _MC)
IN_MSG_NELEMS = _col("in msg nelems", "elements", "input message elements", _MC)
OUT_MSG_NELEMS = _col("out msg nelems", "elements", "output message elements", _MC)
MESSAGE_SIZE_B = _col("message size (B)", "B", "message elements × element size", _MC, fmt=INT)
FIRST_START_US = _col("first start (µs)", "µs", "first kernel start over the ranks, from the first call", _MC, fmt=US)
START_SKEW_US = _col("start skew (µs)", "µs", "max − min kernel start over the ranks", _MC, fmt=US)
STRAGGLER_RANK = _col("straggler rank", "", "last rank to start", _MC)
TRANSFER_TIME_US = _col("transfer time (µs)", "µs", "max end − max start over the ranks", _MC, fmt=US)
ALGBW_GB_PER_S = _col("algbw (GB/s)", "GB/s", "message size / transfer time", _MC, fmt=US)
BUSBW_FACTOR = _col("busbw factor", "", "nccl-tests bus-bandwidth factor of the collective on n ranks", _MC, fmt=US)
BUSBW_GB_PER_S = _col("busbw (GB/s)", "GB/s", "algbw × busbw factor", _MC, fmt=US)
LINK_GB_PER_S_PER_DIRECTION = _col(
    "link (GB/s per direction)", "GB/s", "the spec's per-direction GPU link bandwidth", _SPEC, fmt="0.0"
)
BUSBW_OF_LINK_PCT = _col("busbw of link (%)", "%", "100 × busbw / link", _MC, fmt=PCT)


def rank_time(rank) -> str:
    """The column of one rank's time (``rank r (µs)``, ops_by_rank)."""
    return f"rank {rank} (µs)"


def rank_arrival(rank) -> str:
    """The column of one rank's arrival at a collective (``rank r arrival (µs)``)."""
    return f"rank {rank} arrival (µs)"


def rank_call_time(rank) -> str:
    """The column of one rank's time in a collective (``rank r time (µs)``)."""
    return f"rank {rank} time (µs)"


# the diff sheets (diff/sheets.py): A and B are the two sides, delta = B − A, speedup = A / B
_D = "diff/sheets.py"
MATCH = _col("match", "", "rule that matched the rows (diff/match.py), or vanished / appeared", "diff/match.py")
STATUS = _col("status", "", "faster, slower, same, vanished or appeared", _D)
COUNT_A = _col("count A", "calls", "count on side A", _D, fmt=INT)
COUNT_B = _col("count B", "calls", "count on side B", _D, fmt=INT)
TIME_A_US = _col("time A (µs)", "µs", "time sum (µs) on side A", _D, fmt=US)
TIME_B_US = _col("time B (µs)", "µs", "time sum (µs) on side B", _D, fmt=US)
DELTA_US = _col("delta (µs)", "µs", "time B − time A", _D, fmt=US)
SPEEDUP_A_PER_B = _col("speedup (A/B)", "", "time A / time B (> 1: B is faster)", _D, fmt=US)
SHARE_OF_TOTAL_DELTA_PCT = _col("share of total delta (%)", "%", "100 × delta / Σ delta", _D, fmt=PCT)
ROOFLINE_MEAN_A_PCT = _col("roofline mean A (%)", "%", "call-weighted roofline mean (%) on side A", _D, fmt=PCT)
ROOFLINE_MEAN_B_PCT = _col("roofline mean B (%)", "%", "call-weighted roofline mean (%) on side B", _D, fmt=PCT)
KERNELS_A = _col("kernels A", "", "kernels on side A", _D)
KERNELS_B = _col("kernels B", "", "kernels on side B", _D)
METRIC = _col("metric", "", "what the diff_summary row sums", _D)
A = _col("A", "µs", "the metric on side A", _D, fmt=US)
B = _col("B", "µs", "the metric on side B", _D, fmt=US)
DELTA = _col("delta", "µs", "B − A", _D, fmt=US)
ROWS = _col("rows", "rows", "diff_ops rows in the metric", _D, fmt=INT)
FIELD = _col("field", "", "what diff_context compares: GPU, GPU spec, world size, rank", "diff/context.py")
COMPARISON = _col("comparison", "", "same, differs, or unknown on A, B or both sides", "diff/context.py")
DEVICE_A = _col("device A", "", "device of side A's timeline", _D)
DEVICE_B = _col("device B", "", "device of side B's timeline", _D)
TIME_A_MS = _col("time A (ms)", "ms", "time (ms) on side A", _D, fmt=US)
TIME_B_MS = _col("time B (ms)", "ms", "time (ms) on side B", _D, fmt=US)
DELTA_MS = _col("delta (ms)", "ms", "time B − time A", _D, fmt=US)
PERCENT_OF_TOTAL_A_PCT = _col("percent of total A (%)", "%", "percent of total (%) on side A", _D, fmt=PCT)
PERCENT_OF_TOTAL_B_PCT = _col("percent of total B (%)", "%", "percent of total (%) on side B", _D, fmt=PCT)


# between the kernels (docs/between-kernels.md)
_FF, _ST, _ID, _LA = "tables/fix_first.py", "tables/steps.py", "tables/idle.py", "tables/launches.py"
PRIORITY = _col("priority", "", "position in the ranking of the time that could be won (1 = largest)", _FF)
KIND = _col("kind", "", "roofline gap, host wait, exposed communication or exposed memcpy", _FF)
WHAT = _col("what", "", "the change the row stands for (an op to its target share of roofline, ...)", _FF)
TIME_NOW_US = _col("time now (µs)", "µs", "what the row spends today (an op's GPU time, a wait)", _FF, US)
WON_US = _col("won (µs)", "µs", "time saved: time - roofline time / target (op rows); the whole wait", _FF, US)
WON_MIN_US = _col("won min (µs)", "µs", "lower bound of won (roofline time at its upper bound; 0 for waits)", _FF, US)
WON_MAX_US = _col("won max (µs)", "µs", "upper bound of won (roofline time at its lower bound)", _FF, US)
SHARE_OF_RUN_PCT = _col("share of run (%)", "%", "won / the longest device's timeline total", _FF, PCT)
EVIDENCE = _col("evidence", "", "the sheet and row the figure comes from", _FF)
CAVEAT = _col("caveat", "", "why the figure may be off (bounds, suspect inputs, an upper limit)", _FF)
STEP = _col("step", "", "ProfilerStep#N's N, else the step's position (0, 1, ...)", _ST)
LABEL = _col("label", "", "the step range's name", _ST)
SOURCE = _col("source", "", "what the steps come from: ProfilerStep, iteration annotation or graph replay", _ST)
STEP_TIME_US = _col("step time (µs)", "µs", "step start to the later of its CPU end and last GPU end", _ST, US)
GPU_EVENTS = _col("GPU events", "", "GPU events whose launch call (else op) starts in the step", _ST, INT)
GPU_WINDOW_US = _col("GPU window (µs)", "µs", "first start to last end of the step's GPU events", _ST, US)
GPU_BUSY_US = _col("GPU busy (µs)", "µs", "union of the step's GPU events", _ST, US)
GPU_IDLE_US = _col("GPU idle (µs)", "µs", "GPU window - GPU busy", _ST, US)
LAUNCH_CALLS = _col(
    "launch calls", "", "launch calls that start in the step / of the op (a graph launch: one)", _LA, INT
)
LAUNCH_TIME_US = _col("launch time (µs)", "µs", "CPU time of the step's launch calls", _ST, US)
TOKENS = _col("tokens", "", "new tokens (c_sq + g_sq) of the step's iteration annotations", _ST, INT)
TIME_PER_TOKEN_US = _col("time per token (µs)", "µs", "step time / tokens", _ST, US)
VERDICT = _col("verdict", "", "CPU-bound when host wait exceeds 30% of the step time", _ST)
NOTE = _col("note", "", "remarks: likely warm-up (and why), what the row adds to", _ST)
GAPS = _col("gaps", "", "idle gaps (intervals with no GPU event of the device or stream)", _ID, INT)
IDLE_US = _col("idle (µs)", "µs", "sum of the gaps; a device's 'all' row equals gpu_timeline idle", _ID, US)
HOST_WAIT_US = _col("host wait (µs)", "µs", "idle while nothing was queued: the GPU waited for a launch", _ID, US)
GPU_WAIT_US = _col("GPU wait (µs)", "µs", "idle while work was queued: it waited on a dependency", _ID, US)
UNKNOWN_US = _col("unknown (µs)", "µs", "idle closed by an event without a launch call in the trace", _ID, US)
HOST_WAIT_PCT = _col("host wait (%)", "%", "host wait / idle (idle_time) or / step time (steps)", _ID, PCT)
OP = _col("op", "", "the op that launched the events (or the launch call outside any op)", _LA)
LAUNCH_TIME_SUM_US = _col("launch time sum (µs)", "µs", "CPU time of the launch calls", _LA, US)
LAUNCH_TIME_MEAN_US = _col("launch time mean (µs)", "µs", "launch time sum / launch calls", _LA, US)
DELAY_MEDIAN_US = _col("delay median (µs)", "µs", "median GPU start - launch call start (skewed left out)", _LA, US)
DELAY_MAX_US = _col("delay max (µs)", "µs", "largest GPU start - launch call start", _LA, US)
GPU_WORK_SHORTER_THAN_LAUNCH = _col(
    "GPU work shorter than launch", "", "calls whose GPU events ran for less than the call's CPU time", _LA, INT
)
CLOCK_SKEW = _col("clock skew", "", "GPU events starting before their launch call (different clocks)", _LA, INT)
LAUNCHES = _col("launches", "", "GPU events with a launch call on the stream", _LA, INT)
QUEUED_MAX = _col("queued max", "", "most events launched and not yet started at once", _LA, INT)
QUEUED_MEAN = _col("queued mean", "", "time-weighted mean of that count, first launch to last start", _LA, "0.00")
NOTHING_QUEUED_PCT = _col("nothing queued (%)", "%", "share of that time with nothing queued", _LA, PCT)

_SB = "multi/stragglers.py"
TIMES_LAST = _col("times last", "calls", "calls of the step in which the straggler rank started last", _SB, INT)
SKEW_SUM_US = _col("skew sum (µs)", "µs", "start skew summed over the step's collective calls", _SB, US)
SKEW_MAX_US = _col("skew max (µs)", "µs", "largest start skew of the step's collective calls", _SB, US)
STRAGGLER_SKEW_US = _col(
    "straggler skew (µs)", "µs", "skew summed over the calls where the straggler rank was last", _SB, US
)


def side_b(column: str) -> str:
    """Side B's value of an identity column in diff_ops (``name B``, ``input dims B``, ...)."""
    return f"{column} B"


NAME_B = _col("name B", "", "side B's name where it differs from A's", _D)
INPUT_DIMS_B = _col("input dims B", "", "side B's input dims where they differ from A's", _D)
INPUT_TYPES_B = _col("input types B", "", "side B's input types where they differ from A's", _D)
