"""``perfreport diff`` on a terminal: the totals, the rows gained or lost, the GPU timelines.

Same conventions as the analyze summary (:mod:`perfreport.writers.console`): every table goes
through :func:`perfreport.writers.fit_table.fit`, so numbers are compact and whole, the op name
is the flexible column shortened in the middle, and optional columns go first when the console
is narrow. The shape stays whenever two rows shown share a name (four ``aten::bmm`` rows must
not look the same). The header names each side and its GPU.
"""

from __future__ import annotations

from perfreport.tables import columns as C

from rich.console import Console

from perfreport.writers import numfmt
from perfreport.writers.console import MIN_NAME, compact_shape, print_line, print_notes
from perfreport.writers.fit_table import Col, fit

_STATUS = {"name+shapes+dtypes": "same shape", "name+category": "same name", "kernel name": "same kernels"}


def _delta(v) -> str:
    s = numfmt.time_us(v)
    return s if not s or s.startswith("-") or v == 0 else "+" + s


def _speedup(v) -> str:
    return f"{v:.2f}x" if isinstance(v, (int, float)) and v == v and v not in (float("inf"),) else ""


def _roofline(r) -> str:
    a, b = numfmt.pct(r.get(C.ROOFLINE_MEAN_A_PCT)), numfmt.pct(r.get(C.ROOFLINE_MEAN_B_PCT))
    return f"{a or '-'}→{b or '-'}" if a or b else ""


def diff_summary_table(report, width: int = 200):
    """``diff_summary``: total GPU kernel time and the time per match rule, A and B."""
    cols = [
        Col("metric", flex=True, min=16),
        Col("A", num=True),
        Col("B", num=True),
        Col("delta", num=True),
        Col("A/B", num=True),
        Col("rows", num=True),
    ]
    recs = [
        {
            "metric": r["metric"].replace(" (µs)", ""),
            "A": numfmt.time_us(r["A"]),
            "B": numfmt.time_us(r["B"]),
            "delta": _delta(r["delta"]),
            "A/B": _speedup(r[C.SPEEDUP_A_PER_B]),
            "rows": numfmt.count(r["rows"]),
        }
        for r in report.sheet("diff_summary").records()
    ]
    return fit(recs, cols, width, title="totals, A vs B (diff_summary)")


def diff_timeline_table(report, width: int = 200):
    """``diff_gpu_timeline``: per device pair and time type, A and B side by side."""
    cols = [Col("GPU A/B", flex=True, min=7), Col("type", flex=True, min=8, cut="end")]
    cols += [Col(h, num=True, drop=d) for h, d in (("time A", 0), ("time B", 0), ("delta", 0), ("A/B", 0))]
    cols += [Col("share A", num=True, drop=2), Col("share B", num=True, drop=1)]
    recs = []
    for r in report.sheet("diff_gpu_timeline").records():
        ms = lambda k: numfmt.time_us(r[k] * 1e3) if r.get(k) is not None else ""  # noqa: E731, B023
        recs.append(
            {
                "GPU A/B": f"{r['device A']}/{r['device B']}",
                "type": r["type"],
                "time A": ms(C.TIME_A_MS),
                "time B": ms(C.TIME_B_MS),
                "delta": _delta(r[C.DELTA_MS] * 1e3) if r.get(C.DELTA_MS) is not None else "",
                "A/B": _speedup(r.get(C.SPEEDUP_A_PER_B)),
                "share A": numfmt.pct(r.get(C.PERCENT_OF_TOTAL_A_PCT)),
                "share B": numfmt.pct(r.get(C.PERCENT_OF_TOTAL_B_PCT)),
            }
        )
    return fit(recs, cols, width, title="GPU timeline, A vs B (diff_gpu_timeline)")


def diff_ops_table(report, width: int, top: int = 10):
    """The first ``top`` rows of ``diff_ops`` (by |delta|, then time) in ``width`` columns."""
    data = report.sheet("diff_ops").records()[:top]
    names = [r["name"] for r in data]
    twins = len(set(names)) < len(names)  # two rows of one name: the shape tells them apart
    cols = [
        Col("name", flex=True, min=MIN_NAME, pref=28, max=60),
        Col("match", flex=True, min=8, cut="end", drop=1),
        Col("shape", flex=True, cut="items", min=12, pref=14, max=30, drop=0 if twins else 3),
        Col("time A", num=True),
        Col("time B", num=True),
        Col("delta", num=True),
        Col("A/B", num=True),
        Col("roofline A→B", key="roofline", num=True, drop=2),
    ]
    recs = [
        {
            "name": r["name"],
            "match": _STATUS.get(r["match"], r["match"]),
            "shape": compact_shape(r.get(C.INPUT_DIMS) or ""),
            "time A": numfmt.time_us(r.get(C.TIME_A_US)),
            "time B": numfmt.time_us(r.get(C.TIME_B_US)),
            "delta": _delta(r.get(C.DELTA_US)),
            "A/B": _speedup(r.get(C.SPEEDUP_A_PER_B)),
            "roofline": _roofline(r),
        }
        for r in data
    ]
    return fit(recs, cols, width, title="rows by time gained or lost (diff_ops)")


def sides(report) -> list[str]:
    """``A: <source> (<kind>) — GPU spec: …`` and the same for B."""
    out = []
    notes = report.sheet("diff_summary").notes
    for side in ("A", "B"):
        src = next((n for n in notes if n.startswith(f"{side}: ")), f"{side}: ?")
        gpu = [n[len(side) + 1 :] for n in report.notes if n.startswith(f"{side} GPU spec")]
        out.append(src + (f" — {gpu[0]}" if gpu else " — GPU spec: not recorded"))
    return out


def print_diff_summary(report, console: Console, top: int = 10) -> None:
    """``perfreport diff`` on a terminal: the sides and their GPUs, the totals, the top rows
    gained or lost, the timelines, the notes."""
    width = console.width
    print_line(console, report.source, width, style="bold")
    if "diff_context" in report.sheet_names:
        for n in report.sheet("diff_context").notes:
            if n.startswith("A and B differ") or n.startswith("the times and speedups"):
                print_line(console, n, width, style="bold yellow", wrap=True)
    for line in sides(report):
        print_line(console, line, width, wrap=True)
    console.print(diff_summary_table(report, width))
    console.print()
    console.print(diff_ops_table(report, width, top))
    if report.sheet("diff_gpu_timeline").rows:
        console.print()
        console.print(diff_timeline_table(report, width))
    console.print()
    shown = set(sides(report)) | {n for n in report.sheet("diff_summary").notes if n[:3] in ("A: ", "B: ")}
    print_notes(console, [], [n for n in report.sheet("diff_summary").notes if n not in shown], width)


__all__ = ["diff_ops_table", "diff_summary_table", "diff_timeline_table", "print_diff_summary", "sides"]
