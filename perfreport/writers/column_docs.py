"""What every report column means: unit, formula, source. The workbook's ``columns`` sheet.

A test checks that every column of every fixture's report has a definition here, so a new
column in ``tables/`` needs one line below. Lookup is by exact column name first, then by
prefix (``param: ...``) so model parameters are covered whatever the model names them.
"""

from __future__ import annotations

T = "tables/perf.py"
O = "tables/ops.py"
K = "tables/kernels.py"
TL = "tables/timeline.py"
TRACE = "trace events (ts, dur in µs)"
SPEC = "GPU spec (perfreport archs; notes sheet)"

# column -> (unit, formula / meaning, source)
DOCS: dict[str, tuple[str, str, str]] = {
    # identity
    "name": ("", "op name (cpu_op), runtime call outside any op, or '(unlinked) <kernel>'", TRACE),
    "category": ("", "perf-model category of the op (models/registry.py), or the event kind", "models/registry.py"),
    "perf model": ("", "class of the perf model evaluated on the row's op", "models/registry.py"),
    "reason": ("", "why the model gave no FLOPs/bytes for this op (empty when it did)", "models/*"),
    "flags": (
        "",
        "self-audit findings, ' | '-separated: above roofline (with the likely cause), bimodal "
        "(split by kernels or layer parity), assumption (names the unknown), host link",
        "tables/flags.py",
    ),
    "coverage": (
        "",
        "'modelled' (the row has a roofline) or why not: no model for the op, model error, "
        "no roofline figure, graph replay without shapes, no CPU launch in the window, inside a "
        "user annotation only, launched outside any op",
        "tables/coverage.py",
    ),
    "device": ("", "GPU device id of the events", TRACE),
    "type": ("", "timeline bucket: computation, exposed comm, exposed memcpy, idle, busy, total, ...", TL),
    "parent op": ("", "op that launched the kernel (innermost enclosing cpu_op of its runtime call)", K),
    "parent op category": ("", "category of the parent op", K),
    "kernel": ("", "GPU kernel (or memcpy/memset) name", TRACE),
    "kernels": ("", "kernels the row's ops launched: name × count", T),
    "stream": ("", "GPU stream of the kernel", TRACE),
    "compute spec": ("", "peak the roofline uses, e.g. matrix_bf16 (tensor cores) or vector_fp32", "models/*"),
    "bound": (
        "",
        "which roofline term is larger: compute (FLOP / peak) or memory (bytes / bandwidth)",
        "specs.roofline",
    ),
    # arguments
    "input dims": ("", "shapes of the op's inputs as recorded (record_shapes=True)", TRACE),
    "input types": ("", "dtypes of the op's inputs", TRACE),
    "input strides": ("", "strides of the op's inputs", TRACE),
    "concrete inputs": ("", "scalar arguments as the trace records them", TRACE),
    # counts and times
    "count": ("calls", "number of calls (or kernels) grouped in the row", TRACE),
    "time sum (µs)": ("µs", "Σ over calls of the GPU time of the row's kernels (CPU op time without GPU events)", T),
    "time mean (µs)": ("µs", "time sum / count", T),
    "time median (µs)": ("µs", "median of the per-call times", T),
    "time std (µs)": ("µs", "sample standard deviation of the per-call times (ddof = 1)", T),
    "time min (µs)": ("µs", "shortest call", T),
    "time max (µs)": ("µs", "longest call", T),
    "percent (%)": ("%", "100 × the row's time / all GPU event time in the trace", "tables/sheet.rank"),
    "cumulative percent (%)": ("%", "running sum of percent (%) down the sorted rows", "tables/sheet.rank"),
    "example ts (µs)": ("µs", "start of one instance, to find it in Perfetto / chrome://tracing", TRACE),
    "direct kernel time (µs)": ("µs", "Σ GPU time of kernels the op's own runtime calls launched", O),
    "subtree kernel time (µs)": ("µs", "direct kernel time of the op and all its descendants", O),
    "CPU time (µs)": ("µs", "Σ of the op's CPU durations", O),
    "direct kernel time mean (µs)": ("µs", "direct kernel time / count", O),
    "direct kernel time median (µs)": ("µs", "median direct kernel time per call", O),
    "direct kernel time std (µs)": ("µs", "sample standard deviation of direct kernel time per call", O),
    "direct kernel time min (µs)": ("µs", "shortest call's direct kernel time", O),
    "direct kernel time max (µs)": ("µs", "longest call's direct kernel time", O),
    "direct kernel time sum (µs)": ("µs", "Σ direct kernel time", O),
    "subtree kernel time sum (µs)": ("µs", "Σ subtree kernel time", O),
    "CPU time mean (µs)": ("µs", "CPU time / count", O),
    "CPU time sum (µs)": ("µs", "Σ CPU time", O),
    "sum (µs)": ("µs", "Σ kernel durations", K),
    "mean (µs)": ("µs", "sum / count", K),
    "median (µs)": ("µs", "median kernel duration", K),
    "min (µs)": ("µs", "shortest kernel", K),
    "max (µs)": ("µs", "longest kernel", K),
    "percent of kernel time (%)": ("%", "100 × sum / Σ all kernel durations", K),
    "percent of GPU timeline (%)": ("%", "100 × sum / GPU timeline total (first start to last end)", K),
    "time (ms)": ("ms", "length of the union of the bucket's intervals", TL),
    "percent of total (%)": ("%", "100 × time / total (first start to last end on the device)", TL),
    # work and rates
    "GFLOP": ("10^9 FLOP", "FLOPs of one call from the perf model (formula in docs/models.md)", "models/*"),
    "data moved (MB)": ("10^6 B", "bytes one call must read and write at least, from the perf model", "models/*"),
    "FLOP/byte": ("FLOP/B", "arithmetic intensity: GFLOP × 1e9 / (data moved (MB) × 1e6)", T),
    "TFLOP/s mean": ("10^12 FLOP/s", "mean over calls of FLOP / call time", T),
    "TB/s mean": ("10^12 B/s", "mean over calls of bytes / call time", T),
    # roofline
    "roofline time (µs)": ("µs", "max(FLOP / peak[compute spec], bytes / memory bandwidth)", SPEC),
    "roofline time min (µs)": (
        "µs",
        "roofline time with the row's assumptions at their low bounds",
        "models/base.assumptions",
    ),
    "roofline time max (µs)": (
        "µs",
        "roofline time with the row's assumptions at their high bounds",
        "models/base.assumptions",
    ),
    "roofline mean (%)": ("%", "mean over calls of 100 × roofline time / call time (100% = at the roofline)", T),
    "roofline median (%)": ("%", "median over calls of 100 × roofline time / call time", T),
    "roofline min (%)": ("%", "lowest per-call 100 × roofline time / call time", T),
    "roofline max (%)": ("%", "highest per-call 100 × roofline time / call time", T),
    "roofline std (%)": ("%", "sample standard deviation of the per-call roofline percentages", T),
    "roofline % min": ("%", "roofline % with the row's assumptions at their low bounds", "models/base.assumptions"),
    "roofline % max": ("%", "roofline % with the row's assumptions at their high bounds", "models/base.assumptions"),
}

PREFIXES: dict[str, tuple[str, str, str]] = {
    "param: ": ("", "a perf-model parameter read from the op's arguments (model docstring names it)", "models/*"),
}

# generic fallbacks by what a header says about itself; used only when nothing above matches
SUFFIXES: dict[str, tuple[str, str]] = {
    "(µs)": ("µs", "microseconds"),
    "(ms)": ("ms", "milliseconds"),
    "(%)": ("%", "percent"),
}


def describe(column: str) -> tuple[str, str, str] | None:
    """(unit, formula, source) of ``column``, or None when it has no definition."""
    if column in DOCS:
        return DOCS[column]
    for p, d in PREFIXES.items():
        if column.startswith(p):
            return d
    return None


def columns_rows(sheets) -> list[list[str]]:
    """Rows of the ``columns`` sheet: column, unit, formula / meaning, source, sheets it is in."""
    where: dict[str, list[str]] = {}
    for sh in sheets:
        for c in sh.columns:
            key = "param: *" if str(c).startswith("param: ") else str(c)
            where.setdefault(key, []).append(sh.name)
    out = []
    for col, names in where.items():
        d = describe("param: x" if col == "param: *" else col)
        if d is None:
            unit = next((u for s, (u, _) in SUFFIXES.items() if col.endswith(s)), "")
            d = (unit, "(no definition yet)", "")
        out.append([col, d[0], d[1], d[2], ", ".join(names)])
    return out


__all__ = ["DOCS", "PREFIXES", "columns_rows", "describe"]
