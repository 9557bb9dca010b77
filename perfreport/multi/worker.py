"""The per-trace work of a multi-rank run: analyze one trace, send back compact sheets.

:func:`analyze_trace` is what every engine runs (in this process, in a process pool, or as a
Ray task): a plain function of a path and a dict of options returning a :class:`RankResult`
of plain values, so it pickles small. The full per-rank workbook, when asked for, is written
by the worker itself and never travels.
"""

from __future__ import annotations

import msgspec
from msgspec import field
from pathlib import Path

from perfreport.multi.collectives import extract_calls
from perfreport.tree.steps import find_steps
from perfreport.tables import columns as C

OP_KEY = (C.NAME, C.CATEGORY, C.INPUT_DIMS, C.INPUT_TYPES)
AUDIT_TOP = 30  # flagged rows per rank sent back for --audit
ANALYZE_OPTS = (
    "arch",
    "basis",
    "graph_capture",
    "model_config",
    "models",
    "short_kernel_us",
    "linked_only",
    "steps",
    "target_roofline",
    "command",
    "tune_malloc",
)


class RankResult(msgspec.Struct):
    path: str
    dist_rank: int | None  # distributedInfo.rank
    world_size: int | None
    base_ns: int | None  # baseTimeNanoseconds
    spec_key: str | None
    arch_msg: str
    devices: str
    has_gpu: bool
    timeline: list[list]  # gpu_timeline rows: device, type, time (ms), percent
    ops: list[list]  # OP_KEY + count, time sum (µs), roofline mean (%)
    calls: list[dict] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    per_rank_report: str | None = None
    peak_rss_mb: float | None = None  # of the process that ran it (not in any sheet)
    coverage: dict | None = None  # Coverage.to_dict() of this rank
    audit: dict = field(default_factory=dict)  # notes, rows (the top AUDIT_TOP), count
    points: list[dict] = field(default_factory=list)  # unified rows with FLOP/byte and TFLOP/s
    steps: list[tuple] = field(default_factory=list)  # (number, CPU start, CPU end) of each step
    sha256: str | None = None  # of the trace file (the merged report's notes)


def per_rank_name(path: str) -> str:
    name = Path(path).name
    for suf in (".gz", ".json"):
        if name.endswith(suf):
            name = name[: -len(suf)]
    return f"{name}_perf_report.xlsx"


def analyze_trace(path: str, opts: dict) -> RankResult:
    """Analyze ``path`` with the analyze options in ``opts`` (plus ``per_rank_dir``)."""
    from perfreport.pipeline import analyze
    from perfreport.tables.sheet import Sheet

    got: dict = {}
    kw = {k: opts[k] for k in ANALYZE_OPTS if opts.get(k) is not None}

    def on_tree(tree):
        got["calls"] = extract_calls(tree)
        got["steps"] = [(s.number, s.ts, s.end) for s in find_steps(tree)]

    report = analyze(path, on_tree=on_tree, timeline=False, **kw)  # the merged page has no time axis
    calls = got.get("calls", [])
    meta = report.meta
    di = meta.get("distributedInfo") if isinstance(meta.get("distributedInfo"), dict) else {}
    out_path = None
    if opts.get("per_rank_dir"):
        if calls:
            cols = [
                "pg",
                "pg_desc",
                "seq",
                "collective",
                "dtype",
                "group_size",
                "in_nelems",
                "out_nelems",
                "cpu_ts",
                "start",
                "end",
                "kernel_time",
                "kernel",
                "source",
            ]
            report.sheets.append(Sheet.from_records("collectives", calls, cols))
        d = Path(opts["per_rank_dir"])
        d.mkdir(parents=True, exist_ok=True)
        out_path = str(d / per_rank_name(path))
        report.to_excel(out_path)
    us = report.sheet("unified_perf_summary")
    idx = [us.columns.index(c) for c in OP_KEY + (C.COUNT, C.TIME_SUM_US, C.ROOFLINE_MEAN_PCT)]
    ops = [[row[i] for i in idx] for row in us.rows]
    tl = report.sheet("gpu_timeline").rows if "gpu_timeline" in report.sheet_names else []
    devs = meta.get("deviceProperties")
    names = sorted({str(d.get("name") or "") for d in devs if isinstance(d, dict)}) if isinstance(devs, list) else []
    base = meta.get("baseTimeNanoseconds")
    return RankResult(
        path=path,
        dist_rank=_int(di.get("rank")),
        world_size=_int(di.get("world_size")),
        base_ns=base if isinstance(base, int) else None,
        spec_key=report.spec.key if report.spec is not None else None,
        arch_msg=report.arch_msg,
        devices=", ".join(names),
        has_gpu=report.has_gpu,
        timeline=[list(r) for r in tl],
        ops=ops,
        calls=[{k: c[k] for k in c if k != "kernel"} for c in calls],
        warnings=list(report.warnings),
        sha256=report.provenance.get("input SHA-256"),
        per_rank_report=out_path,
        peak_rss_mb=_peak_rss_mb(),
        coverage=report.coverage.to_dict() if report.coverage is not None else None,
        audit=_audit(us),
        points=_points(report),
        steps=got.get("steps", []),
    )


def _audit(unified) -> dict:
    """The rank's self-audit (:func:`perfreport.tables.audit.audit_sheet`), its top rows only."""
    from perfreport.tables.audit import audit_sheet

    sh = audit_sheet(unified)
    return {"notes": list(sh.notes), "rows": sh.records()[:AUDIT_TOP], "count": len(sh.rows)}


def _points(report) -> list[dict]:
    """The rank's roofline-chart points: unified rows with FLOP/byte and achieved TFLOP/s."""
    from perfreport.writers.roofline_svg import points
    from perfreport.writers.summary import unified_rows

    return points(unified_rows(report))


def _peak_rss_mb() -> float | None:
    try:
        import resource
    except ImportError:  # not POSIX
        return None
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # KiB on Linux


def _int(v):
    try:
        return int(v) if v is not None else None
    except (TypeError, ValueError):
        return None


__all__ = ["analyze_trace", "RankResult", "per_rank_name", "OP_KEY"]
