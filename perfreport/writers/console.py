"""Rich console output: the terminal summary and single-sheet tables.

The summary fits the console it is printed on (tested at 80, 120 and 200 columns): numbers are
compact (:mod:`perfreport.writers.numfmt`) and never wrap; the op name is the one flexible
column, shortened in the middle; optional columns (shape, count, rates, category) appear only
when there is room. Every cell is a :class:`rich.text.Text`, so a ``[...]`` in an op name is
printed, not read as markup.
"""

from __future__ import annotations

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from perfreport.writers import numfmt
from perfreport.writers.cells import console_text, rows, text
from perfreport.writers.fix_first_console import fix_first_lines
from perfreport.writers.summary import coverage_lines, gpu_breakdown, top_rows
from perfreport.tables import columns as C

ELLIPSIS = "…"
MIN_NAME = 16


def shorten_middle(s: str, width: int) -> str:
    """``s`` cut to ``width`` characters by dropping its middle: the head names the op or
    kernel family, the tail its variant (tile sizes, dtype suffixes)."""
    s = " ".join(text(s).split())  # control characters escaped, whitespace folded
    if len(s) <= width:
        return s
    if width <= 1:
        return s[:width]
    keep = width - 1
    head = (keep + 1) // 2
    return s[:head] + ELLIPSIS + s[len(s) - (keep - head) :]


def shorten_end(s: str, width: int) -> str:
    s = " ".join(text(s).split())
    return s if len(s) <= width else s[: max(0, width - 1)] + ELLIPSIS


def compact_shape(s: str) -> str:
    """``(16, 559, 1024), (16, 559, 1), (), ()`` -> ``(16,559,1024),(16,559,1)``: no spaces,
    no trailing scalar ``()`` entries."""
    s = " ".join(text(s).split()).replace(", ", ",")
    while s.endswith(",()"):
        s = s[:-3]
    return s


def _fmt(v) -> str:
    if v is None:
        return ""
    if isinstance(v, float):
        return f"{v:,.3f}"
    s = text(v)
    return s if len(s) <= 90 else s[:87] + "..."


def sheet_table(sheet, max_rows: int | None = None, columns: list[str] | None = None) -> Table:
    """One sheet as a rich table (``--format table``): numbers in full, never wrapped; text
    columns fold."""
    if columns is None:
        idx = list(range(len(sheet.columns)))
    else:
        idx = [sheet.columns.index(c) for c in columns if c in sheet.columns]
    t = Table(title=sheet.name, show_lines=False, header_style="bold")
    data = list(rows(sheet))
    for i in idx:
        numeric = any(isinstance(r[i], (int, float)) and not isinstance(r[i], bool) for r in data[:50])
        t.add_column(
            str(sheet.columns[i]),
            justify="right" if numeric else "left",
            overflow="ellipsis" if numeric else "fold",
            no_wrap=numeric,
        )
    for n, r in enumerate(data):
        if max_rows is not None and n >= max_rows:
            break
        t.add_row(*[Text(_fmt(r[i])) for i in idx])
    return t


def table_text(sheet, min_width: int = 80) -> str:
    """``--format table``: the sheet as aligned text as wide as it needs (at least
    ``min_width``), so no number is folded or cut, whatever the terminal."""
    import io

    t = sheet_table(sheet)
    need = Console(width=100_000, file=_Null()).measure(t).maximum
    buf = io.StringIO()
    Console(file=buf, width=max(min_width, need), color_system=None).print(t)
    return buf.getvalue()


# (key, header, min console width to show it, formatter) in the order shown; name is separate
_COLUMNS = [
    ("shape", "shape", 100, None),
    ("category", "category", 160, None),
    ("count", "count", 120, numfmt.count),
    ("time", "time", 0, numfmt.time_us),
    ("share", "share", 0, numfmt.pct),
    ("roofline", "roofline", 0, numfmt.pct),
    ("bound", "bound", 0, None),
    ("tflops", "TFLOP/s", 120, numfmt.number),
    ("tbps", "TB/s", 120, numfmt.number),
    ("flags", "flags", 100, None),
]
_NUMERIC = {"count", "time", "share", "roofline", "tflops", "tbps"}
DROP_ORDER = ["category", "count", "tbps", "tflops", "shape", "flags"]  # first goes first


def ops_table(report, width: int, top: int = 15) -> Table | None:
    """The top ``top`` rows of ``unified_perf_summary`` laid out for ``width`` columns."""
    data = top_rows(report, top)
    if not data:
        return None
    shown = [c for c in _COLUMNS if width >= c[2] and any(r.get(c[0]) not in (None, "") for r in data)]
    shape_w = 22 if width < 140 else 30 if width < 190 else 40
    cells = []
    for r in data:
        row = {}
        for key, _, _, f in shown:
            v = r.get(key)
            if f is not None:
                row[key] = f(v)
            else:
                row[key] = "" if v is None else " ".join(str(v).split())
        row["shape"] = shorten_end(compact_shape(row.get("shape", "")), shape_w)
        row["category"] = shorten_end(row.get("category", ""), 24)
        row["flags"] = shorten_end(row.get("flags", ""), 24)
        cells.append(row)

    def build(name_w: int) -> Table:
        t = Table(
            box=box.SIMPLE_HEAD,
            show_edge=False,
            pad_edge=False,
            header_style="bold",
            title="top ops by GPU time (unified_perf_summary)",
            title_justify="left",
        )
        t.add_column("name", no_wrap=True, overflow="ellipsis", min_width=min(name_w, MIN_NAME), max_width=name_w)
        for key, head, _, _ in shown:
            w = max(len(head), max(len(c[key]) for c in cells))
            t.add_column(
                head,
                justify="right" if key in _NUMERIC else "left",
                no_wrap=True,
                overflow="ellipsis",
                min_width=w,
                max_width=w,
            )
        for r, c in zip(data, cells):
            t.add_row(Text(shorten_middle(str(r["name"]), name_w)), *[Text(c[k]) for k, *_ in shown])
        return t

    longest = max(len(" ".join(text(r["name"]).split())) for r in data)
    cap = 80 if width >= 190 else 60
    pref = min(longest, 28 if width < 100 else 36 if width < 190 else 48)  # shrink the name below this only when
    console = Console(width=10_000, file=_Null())  # no optional column is left to drop
    name_w = min(longest, cap)
    while True:
        t = build(name_w)
        need = console.measure(t).maximum
        if need <= width:
            return t
        optional = [c for c in shown if c[2] > 0]
        floor = pref if optional else MIN_NAME
        if name_w - (need - width) >= floor:
            name_w -= need - width
            continue
        if not optional:
            if name_w > MIN_NAME:
                name_w = MIN_NAME
                continue
            return t  # narrower than the essentials: rich crops
        shown.remove(min(optional, key=lambda c: DROP_ORDER.index(c[0])))
        name_w = min(longest, cap)


def timeline_table(report) -> Table | None:
    """One line per GPU: total, busy, computation, exposed comm, exposed memcpy, idle."""
    devs = gpu_breakdown(report)
    if not devs:
        return None
    t = Table(
        box=box.SIMPLE_HEAD,
        show_edge=False,
        pad_edge=False,
        header_style="bold",
        title="GPU timeline",
        title_justify="left",
    )
    t.add_column("GPU", no_wrap=True)
    heads = [
        ("total", "total"),
        ("computation", "compute"),
        ("exposed comm", "exp. comm"),
        ("exposed memcpy", "exp. memcpy"),
        ("idle", "idle"),
    ]
    for _, h in heads:
        t.add_column(h, justify="right", no_wrap=True)
    for dev, d in devs:
        total = d.get("total") or 0.0
        cells = [Text(text(dev))]
        for key, _ in heads:
            ms = d.get(key)
            if ms is None:
                cells.append(Text(""))
                continue
            s = numfmt.time_us(ms * 1000.0)
            if key != "total" and total:
                s += f" {numfmt.pct(100.0 * ms / total):>5}"
            cells.append(Text(s))
        t.add_row(*cells)
    return t


def print_summary(report, console: Console, *, top: int = 15, header: str | None = None) -> None:
    """The terminal summary of a :class:`~perfreport.report.Report`: source and GPU spec, the
    GPU timeline, the top ``top`` ops by GPU time, the coverage line, then the notes."""
    width = console.width
    head = header if header is not None else f"{report.source} — {report.arch_msg}"
    console.print(Text(text(head), style="bold"))
    first = fix_first_lines(report, width)
    for line in first:
        console.print(line)
    if first:
        console.print()
    tl = timeline_table(report)
    if tl is not None:
        console.print(tl)
        console.print()
    ops = ops_table(report, width, top)
    if ops is not None:
        console.print(ops)
        console.print()
    cov = coverage_lines(report)
    for i, line in enumerate(cov):  # the headline whole, the details one line each
        console.print(Text(text(line) if i == 0 else shorten_end(line, max(20, width - 1))))
    seen = set(cov)
    for s in report.sheets:
        for n in s.notes:
            if n not in seen:
                seen.add(n)
                console.print(Text(text(n), style="dim"))


class _Null:
    def write(self, s):
        return len(s)

    def flush(self):
        pass


def archs_table(specs) -> Table:
    """``perfreport archs``: one column per GPU, one row per figure (memory bandwidth, then the
    dense peaks, matrix before vector), so the table stays narrow (about 10 columns per GPU)
    however many precisions the specs list; the GPU names are in the caption."""
    kw = max((len(s.key) for s in specs), default=0)
    names = "\n".join(f"{s.key:<{kw}}  {s.name}" for s in specs)
    t = Table(
        title="GPU specs: memory TB/s, dense peak TFLOP/s",
        title_justify="left",
        box=box.SIMPLE_HEAD,
        header_style="bold",
        caption=names,
        caption_justify="left",
    )
    t.add_column("figure", no_wrap=True)
    for s in specs:
        t.add_column(s.key, justify="right", no_wrap=True)
    t.add_row(Text("memory TB/s"), *[Text("" if s.mem_bw_tbps is None else f"{s.mem_bw_tbps:g}") for s in specs])
    keys = sorted({k for s in specs for k in s.peaks}, key=lambda k: (not k.startswith("matrix_"), k))
    for k in keys:
        t.add_row(Text(k), *[Text(f"{s.peaks[k]:g}" if k in s.peaks else "") for s in specs])
    return t


def print_summary_multi(report, console: Console, top: int = 15) -> None:
    """A merged multi-rank report on a terminal: ranks, the top ops by rank, collectives, the
    coverage statement (all ranks, then each), the notes."""
    console.print(f"[bold]{console_text(report.source)}[/bold] — {console_text(report.arch_msg)}", highlight=False)
    console.print(
        sheet_table(
            report.sheet("ranks"),
            None,
            [
                C.RANK,
                C.RANK_FROM,
                C.TRACE,
                C.KERNEL_TIME_US,
                C.MODELLED_PCT,
                C.BUSY_MS,
                C.EXPOSED_COMM_MS,
                C.IDLE_MS,
                C.COLLECTIVE_CALLS,
            ],
        )
    )
    console.print(
        sheet_table(
            report.sheet("ops_by_rank"),
            top,
            [
                C.NAME,
                C.INPUT_DIMS,
                C.TIME_MIN_US,
                C.TIME_MEDIAN_US,
                C.TIME_MAX_US,
                C.SLOWEST_RANK,
                C.MAX_PER_MEDIAN,
            ],
        )
    )
    if "collectives" in report.sheet_names:
        console.print(
            sheet_table(
                report.sheet("collectives"),
                top,
                [
                    C.PROCESS_GROUP,
                    C.SEQ,
                    C.COLLECTIVE,
                    C.MESSAGE_SIZE_B,
                    C.START_SKEW_US,
                    C.STRAGGLER_RANK,
                    C.TRANSFER_TIME_US,
                    C.ALGBW_GB_PER_S,
                    C.BUSBW_GB_PER_S,
                    C.BUSBW_OF_LINK_PCT,
                ],
            )
        )
    cov = coverage_lines(report)  # all ranks, then one line per rank
    for i, line in enumerate(cov):
        console.print(Text(text(line) if i == 0 else shorten_end(line, max(20, console.width - 1))))
    for n in report.notes:
        if n not in cov:
            console.print(f"[dim]{console_text(n)}[/dim]", highlight=False)
