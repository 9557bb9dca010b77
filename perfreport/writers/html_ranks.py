"""The HTML page of a merged multi-rank report (``perfreport analyze DIR --html FILE``).

One self-contained offline file like the single-trace page (:mod:`perfreport.writers.html`:
same Content-Security-Policy, style and table sorter): the coverage statement (all ranks, then
each rank), one roofline chart with every rank's modelled rows (hover names the rank; area ∝
GPU time; ceilings of the chart spec: ``--arch``, else the lowest rank's), the ``ranks`` table,
each rank's GPU timeline, a sortable table of the top ``ops_by_rank`` rows, the top collective
calls, and the notes.
"""

from __future__ import annotations

from pathlib import Path

from perfreport.writers import numfmt
from perfreport.writers.atomic import atomic_path
from perfreport.writers.cells import rows as sheet_rows
from perfreport.writers.html import CSP, STYLE, devices_html, notes_and_end
from perfreport.writers.roofline_svg import escape as esc
from perfreport.writers.roofline_svg import roofline_svg
from perfreport.writers.summary import coverage_lines, find_sheet
from perfreport.tables import columns as C

RANKS_COLS = [
    C.RANK,
    C.TRACE,
    C.GPU_SPEC,
    C.MODELLED_PCT,
    C.KERNEL_TIME_US,
    C.BUSY_MS,
    C.EXPOSED_COMM_MS,
    C.IDLE_MS,
    C.COLLECTIVE_CALLS,
]
OPS_COLS = [
    C.NAME,
    C.CATEGORY,
    C.INPUT_DIMS,
    C.RANKS_WITH_IT,
    C.TIME_MIN_US,
    C.TIME_MEDIAN_US,
    C.TIME_MAX_US,
    C.SLOWEST_RANK,
    C.MAX_PER_MEDIAN,
]
COLL_COLS = [
    C.PROCESS_GROUP,
    C.SEQ,
    C.COLLECTIVE,
    C.MESSAGE_SIZE_B,
    C.START_SKEW_US,
    C.STRAGGLER_RANK,
    C.TRANSFER_TIME_US,
    C.BUSBW_GB_PER_S,
    C.BUSBW_OF_LINK_PCT,
]


def _cell(col: str, v) -> str:
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        if "(µs)" in col:
            t = numfmt.time_us(v)
        elif "(ms)" in col:
            t = numfmt.time_us(v * 1e3)
        elif "(%)" in col:
            t = numfmt.pct(v)
        elif isinstance(v, int):
            t = numfmt.count(v)
        else:
            t = numfmt.number(v)
        return f'<td class="n" data-v="{float(v)!r}">{esc(t)}</td>'
    if v is None or v == "":
        return '<td class="n" data-v="-1e300"></td>'
    cls = ' class="name"' if col in (C.NAME, C.TRACE) else (' class="shape"' if col == C.INPUT_DIMS else "")
    return f'<td{cls} title="{esc(v)}">{esc(v)}</td>'


def sheet_html(sheet, cols: list[str], n: int | None, table_id: str | None = None) -> str:
    """The first ``n`` rows of ``sheet`` (all when None) in the columns of ``cols`` it has."""
    if sheet is None or not sheet.rows:
        return "<p>No rows.</p>"
    have = [c for c in cols if c in sheet.columns]
    idx = [sheet.columns.index(c) for c in have]
    data = list(sheet_rows(sheet))
    data = data if n is None else data[:n]
    tid = f' id="{table_id}"' if table_id else ""
    out = [f"<table{tid}><thead><tr>" + "".join(f"<th>{esc(c)}</th>" for c in have) + "</tr></thead><tbody>"]
    for r in data:
        out.append("<tr>" + "".join(_cell(c, r[i]) for c, i in zip(have, idx)) + "</tr>")
    out.append("</tbody></table>")
    return "\n".join(out)


def chart_rows(report) -> list[dict]:
    """Every rank's chart points, named ``rank r: name``, share of the GPU time of all ranks."""
    pts = [(rank, p) for rank, ps in sorted(report.rank_points.items()) for p in ps]
    cov = report.coverage
    total = cov.total.total_us if cov is not None else sum(p.get("time") or 0.0 for _, p in pts)
    out = []
    for rank, p in pts:
        q = dict(p, name=f"rank {rank}: {p.get('name')}")
        q["share"] = 100.0 * (p.get("time") or 0.0) / total if total else None
        out.append(q)
    return out


def timeline_devices(report) -> list[tuple[str, dict]]:
    """``[("GPU d of rank r", {type: ms})]`` from ``gpu_timeline_by_rank``."""
    sh = find_sheet(report, "gpu_timeline_by_rank")
    if sh is None:
        return []
    c = sh.columns
    i_r, i_d, i_t, i_ms = c.index(C.RANK), c.index(C.DEVICE), c.index(C.TYPE), c.index(C.TIME_MS)
    devs: dict = {}
    for r in sheet_rows(sh):
        devs.setdefault(f"{r[i_d]} of rank {r[i_r]}", {})[str(r[i_t])] = r[i_ms]
    return list(devs.items())


def ranks_html_text(report, top: int = 50) -> str:
    cov = coverage_lines(report)
    detail = ("coverage: top unmodelled ops", "coverage: model errors")
    shown = [x for x in cov if not x.startswith(detail)]
    folded = [x for x in cov if x.startswith(detail)]
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">',
        f"<title>perfreport: {esc(report.source)}</title><style>{STYLE}</style></head><body>",
        f"<h1>perfreport: {esc(report.source)} (merged)</h1>",
        f"<p>{esc(report.arch_msg)}</p>",
    ]
    if cov:
        more = "".join(f"<p>{esc(x)}</p>" for x in folded)
        parts.append(
            '<div class="coverage" id="coverage">'
            + "".join(f"<p>{esc(x)}</p>" for x in shown)
            + (f"<details><summary>more</summary>{more}</details>" if more else "")
            + "</div>"
        )
    spec = report.chart_spec
    parts.append("<h2>Roofline, all ranks</h2>")
    parts.append(
        '<p class="muted">One point per row of each rank\'s unified_perf_summary with FLOPs and '
        "bytes (hover: the rank and the row): x = FLOP/byte of one call, y = achieved TFLOP/s "
        "(mean over calls), area ∝ GPU time; ceilings of "
        f"{esc(spec.name if spec is not None else 'no GPU spec')}.</p>"
    )
    parts.append(roofline_svg(chart_rows(report), spec))
    parts.append("<h2>Ranks</h2>")
    parts.append(sheet_html(find_sheet(report, "ranks"), RANKS_COLS, None))
    parts.append("<h2>GPU timeline by rank</h2>")
    parts.append(devices_html(timeline_devices(report)))
    ops = find_sheet(report, "ops_by_rank")
    n_ops = len(ops.rows) if ops is not None else 0
    parts.append(f"<h2>Top {min(top, n_ops)} of {n_ops} ops by their slowest rank</h2>")
    parts.append('<p class="muted">Click a header to sort. Full table: the workbook\'s ops_by_rank sheet.</p>')
    parts.append(sheet_html(ops, OPS_COLS, top, table_id="top"))
    coll = find_sheet(report, "collectives")
    if coll is not None:
        parts.append(f"<h2>Collectives (first {min(top, len(coll.rows))} of {len(coll.rows)} calls)</h2>")
        parts.append(sheet_html(coll, COLL_COLS, top))
    parts.append(notes_and_end(report, cov))
    return "\n".join(parts)


def write_ranks_html(report, path: str | Path, top: int = 50) -> Path:
    """Write the page atomically to ``path``; returns the path."""
    text = ranks_html_text(report, top)
    with atomic_path(path, suffix=".html") as tmp:
        Path(tmp).write_text(text, encoding="utf-8")
    return Path(path)


__all__ = ["ranks_html_text", "write_ranks_html", "sheet_html"]
