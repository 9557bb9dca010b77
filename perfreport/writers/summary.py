"""What the people-facing writers (console summary, HTML page) read from a report.

One place maps the unified table's columns to the few figures a reader looks at first, so the
console, the workbook's leading columns and the HTML page agree. Columns a report lacks (e.g.
``flags`` before the self-audit adds it, or roofline figures without a GPU spec) come back as
None and are left out by the writers.
"""

from __future__ import annotations

from perfreport.tables.perf import LEAD_COLS
from perfreport.writers.cells import rows
from perfreport.tables import columns as C

UNIFIED = "unified_perf_summary"

# reader's key -> unified_perf_summary column
LEAD = {
    "name": C.NAME,
    "category": C.CATEGORY,
    "time": C.TIME_SUM_US,
    "share": C.PERCENT_PCT,
    "roofline": C.ROOFLINE_MEAN_PCT,
    "bound": C.BOUND,
    "flags": C.FLAGS,
    "shape": C.INPUT_DIMS,
    "count": C.COUNT,
    "tflops": C.TFLOP_PER_S_MEAN,
    "tbps": C.TB_PER_S_MEAN,
    "ai": C.FLOP_PER_BYTE,
    "gflop": C.GFLOP,
    "mb": C.DATA_MOVED_MB,
    "compute spec": C.COMPUTE_SPEC,
    "roofline time": C.ROOFLINE_TIME_US,
    "types": C.INPUT_TYPES,
}

# the workbook's unified sheet starts with these columns, in this order (then all others);
# the per-category sheets are built in this order (perfreport.tables.perf)
WORKBOOK_LEAD = list(LEAD_COLS)


def find_sheet(report, name: str):
    for s in report.sheets:
        if s.name == name:
            return s
    return None


def unified_rows(report) -> list[dict]:
    """Every unified row as a dict of :data:`LEAD` keys (None where the column is absent)."""
    sh = find_sheet(report, UNIFIED)
    if sh is None:
        return []
    idx = {k: sh.columns.index(c) for k, c in LEAD.items() if c in sh.columns}
    out = []
    for r in rows(sh):
        out.append({k: (r[idx[k]] if k in idx else None) for k in LEAD})
    return out


def top_rows(report, n: int | None) -> list[dict]:
    """The ``n`` rows with the most GPU time (the sheet is already sorted by it)."""
    data = unified_rows(report)
    data.sort(key=lambda r: -(r["time"] or 0.0))
    return data if n is None else data[: max(0, n)]


def gpu_breakdown(report) -> list[tuple[str, dict]]:
    """Per device, ``{type: milliseconds}`` from ``gpu_timeline`` (computation, exposed comm,
    exposed memcpy, idle, busy, total, ...)."""
    sh = find_sheet(report, "gpu_timeline")
    if sh is None or not sh.rows:
        return []
    cols = sh.columns
    i_dev, i_type, i_ms = cols.index(C.DEVICE), cols.index(C.TYPE), cols.index(C.TIME_MS)
    devs: dict = {}
    for r in rows(sh):
        devs.setdefault(str(r[i_dev]), {})[str(r[i_type])] = r[i_ms]
    return list(devs.items())


def coverage_lines(report) -> list[str]:
    """The coverage statement as lines (headline, unmodelled by reason, top unmodelled ops):
    what the console, the notes sheet and the HTML page print; [] if the report has none."""
    cov = getattr(report, "coverage", None)
    return [str(x) for x in cov.lines()] if cov is not None else []


def spec_facts(spec) -> list[tuple[str, str]]:
    """(label, text) lines describing the GPU spec used: name, basis, bandwidth, peaks, sources."""
    if spec is None:
        return [("GPU spec", "none: roofline columns are empty (use --arch)")]
    out = [("GPU spec", f"{spec.name} (key {spec.key}, {spec.basis} figures)")]
    if spec.mem_bw_tbps is not None:
        out.append(("memory bandwidth", f"{spec.mem_bw_tbps:g} TB/s (10^12 B/s)"))
    for k in sorted(spec.peaks):
        out.append((f"peak {k}", f"{spec.peaks[k]:g} TFLOP/s (dense)"))
    if spec.llc_bytes:
        out.append(("last-level cache", f"{spec.llc_bytes / 2**20:g} MiB"))
    for k in sorted(spec.sources):
        out.append((f"source: {k}", spec.sources[k]))
    return out


__all__ = [
    "LEAD",
    "UNIFIED",
    "WORKBOOK_LEAD",
    "coverage_lines",
    "find_sheet",
    "gpu_breakdown",
    "spec_facts",
    "top_rows",
    "unified_rows",
]
