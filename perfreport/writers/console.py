"""Console output: the terminal summary of one trace, and single sheets as aligned text.

Every table goes through :func:`perfreport.writers.fit_table.fit` (fits 80, 120 and 200
columns; numbers compact (:mod:`perfreport.writers.numfmt`), whole and on one line; the op
name the flexible column, shortened in the middle; optional columns dropped by priority).
The ``flags`` column holds one letter per flag (:data:`FLAG_CODES`), with a legend under the
table; ``--audit`` prints each flag in full.
"""

from __future__ import annotations

import os

from rich.console import Console
from rich.text import Text

from perfreport.tables.flags import ABOVE, ASSUMPTION, BIMODAL, HOST_LINK, split_flags, tag_of
from perfreport.writers import numfmt
from perfreport.writers.cells import rows
from perfreport.writers.fit_table import Col, fit, one_line, shorten_end, shorten_middle
from perfreport.writers.fix_first_console import fix_first_lines
from perfreport.writers.summary import coverage_lines, gpu_breakdown, top_rows

ELLIPSIS = "…"
MIN_NAME = 16
FLAG_CODES = {ABOVE: "R", BIMODAL: "B", ASSUMPTION: "A", HOST_LINK: "H"}  # one letter per flag tag


def compact_shape(s: str) -> str:
    """``(16, 559, 1024), (16, 559, 1), (), ()`` -> ``(16,559,1024),(16,559,1)``: no spaces,
    no trailing scalar ``()`` entries."""
    s = one_line(s).replace(", ", ",")
    while s.endswith(",()"):
        s = s[:-3]
    return s


def flag_codes(cell) -> str:
    """``above roofline: ... | assumption: ...`` -> ``R A`` (``?`` for a tag without a code)."""
    return " ".join(dict.fromkeys(FLAG_CODES.get(tag_of(f), "?") for f in split_flags(cell)))


def flag_legend(cells) -> str | None:
    """The legend of the flag codes used in ``cells`` (flags cells), or None if there are none."""
    used = {tag_of(f) for c in cells for f in split_flags(c)}
    if not used:
        return None
    parts = [f"{code} {tag}" for tag, code in FLAG_CODES.items() if tag in used]
    parts += [f"? {tag}" for tag in sorted(used - set(FLAG_CODES))]
    return "flags: " + ", ".join(parts) + " (each in full: --audit)"


def sheet_view(sheet, width: int, *, columns: list[str] | None = None, top: int | None = None, title=True):
    """One sheet laid out for ``width`` columns (``--format table``, the multi-rank summary):
    numbers in full (``1,234.567``), text columns shortened in the middle, the columns at the
    right dropped first when the sheet is too wide (:attr:`Fitted.dropped` names them)."""
    names = [str(c) for c in sheet.columns]
    idx = list(range(len(names))) if columns is None else [names.index(c) for c in columns if c in names]
    data = list(rows(sheet))
    if top is not None:
        data = data[: max(0, top)]
    cols = []
    for pos, i in enumerate(idx):
        numeric = any(isinstance(r[i], (int, float)) and not isinstance(r[i], bool) for r in data[:200])
        pref = 28 if pos == 0 else 12
        cols.append(Col(names[i], key=str(i), num=numeric, drop=pos if pos else 0, flex=not numeric, min=10, pref=pref))
    recs = [{str(i): r[i] for i in idx} for r in data]
    return fit(recs, cols, width, title=sheet.name if title else None)


def table_text(sheet, width: int | None = None) -> str:
    """``--format table``: the sheet as aligned text at ``width`` columns (default: the
    terminal's, else ``$COLUMNS``, else 200), the columns that do not fit named under it."""
    if width is None:
        width = _text_width()
    f = sheet_view(sheet, width)
    out = f.text()
    if f.dropped:
        import textwrap

        note = f"not shown at {width} columns: {', '.join(f.dropped)} (all columns: --format csv or tsv)"
        out += "\n".join(textwrap.wrap(note, max(20, width), break_long_words=False, subsequent_indent="  ")) + "\n"
    return out


def _text_width() -> int:
    import shutil
    import sys

    if sys.stdout.isatty():
        return shutil.get_terminal_size().columns
    try:
        return max(40, int(os.environ.get("COLUMNS", "")))
    except ValueError:
        return 200


def ops_table(report, width: int, top: int = 15):
    """The top ``top`` rows of ``unified_perf_summary`` laid out for ``width`` columns, and
    the flags legend (None when no row has a flag)."""
    data = top_rows(report, top)
    if not data:
        return None, None
    pref = 28 if width < 100 else 36 if width < 190 else 48  # the name shrinks below this only when
    cols = [  # no optional column is left to drop
        Col("name", flex=True, min=MIN_NAME, pref=pref, max=80 if width >= 190 else 60),
        Col("shape", flex=True, cut="items", min=12, pref=16, max=40, drop=2),
        Col("category", drop=6, flex=True, cut="end", min=10, max=24),
        Col("count", num=True, drop=5),
        Col("time", num=True),
        Col("share", num=True),
        Col("roofline", num=True),
        Col("bound"),
        Col("TFLOP/s", key="tflops", num=True, drop=3),
        Col("TB/s", key="tbps", num=True, drop=4),
        Col("flags"),
    ]
    fmts = {"count": numfmt.count, "time": numfmt.time_us, "share": numfmt.pct, "roofline": numfmt.pct}
    fmts.update(tflops=numfmt.number, tbps=numfmt.number, shape=compact_shape, flags=flag_codes)
    cells = [{c.k: (fmts[c.k](r.get(c.k)) if c.k in fmts else r.get(c.k)) for c in cols} for r in data]
    t = fit(cells, cols, width, title="top ops by GPU time (unified_perf_summary)")
    return t, flag_legend(r.get("flags") for r in data)


def timeline_table(report, width: int = 200):
    """One line per GPU: total, computation, exposed comm, exposed memcpy, idle (time, share)."""
    devs = gpu_breakdown(report)
    if not devs:
        return None
    heads = [
        ("computation", "compute"),
        ("exposed comm", "exp. comm"),
        ("exposed memcpy", "exp. memcpy"),
        ("idle", "idle"),
    ]
    cols = [Col("GPU", flex=True, min=6), Col("total", num=True)] + [Col(h, key=k, num=True) for k, h in heads]
    recs = []
    for dev, d in devs:
        total = d.get("total") or 0.0
        rec = {"GPU": dev, "total": numfmt.time_us((d.get("total") or 0.0) * 1000.0) if "total" in d else ""}
        for key, _ in heads:
            ms = d.get(key)
            if ms is None:
                continue
            s = numfmt.time_us(ms * 1000.0)
            rec[key] = s + (f" {numfmt.pct(100.0 * ms / total):>5}" if total else "")
        recs.append(rec)
    return fit(recs, cols, width, title="GPU timeline")


def print_summary(report, console: Console, *, top: int = 15, header: str | None = None) -> None:
    """The terminal summary of a :class:`~perfreport.report.Report`: source and GPU spec, the
    GPU timeline, the top ``top`` ops by GPU time with the flags legend, the coverage lines,
    then the notes (each line whole, or shortened at its end to the console width)."""
    width = console.width
    head = header if header is not None else f"{report.source} — {report.arch_msg}"
    print_line(console, head, width, style="bold")
    first = fix_first_lines(report, width)
    for line in first:
        console.print(line)
    if first:
        console.print()
    tl = timeline_table(report, width)
    if tl is not None:
        console.print(tl)
        console.print()
    ops, legend = ops_table(report, width, top)
    if ops is not None:
        console.print(ops)
        if legend:
            print_line(console, legend, width, style="dim")
        console.print()
    print_notes(console, coverage_lines(report), [n for s in report.sheets for n in s.notes], width)


def print_line(console: Console, line: str, width: int, style: str | None = None, wrap: bool = False) -> None:
    """One line of text: escaped, never read as markup; wrapped at word boundaries when
    ``wrap``, else shortened at its end to ``width``."""
    t = one_line(line)
    if wrap:
        import textwrap

        for part in textwrap.wrap(
            t, width=max(20, width - 1), subsequent_indent="  ", break_long_words=False, break_on_hyphens=False
        ) or [""]:
            console.print(Text(part, style=style or "", no_wrap=True, overflow="ignore"))
        return
    console.print(Text(shorten_end(t, max(20, width - 1)), style=style or "", no_wrap=True, overflow="ignore"))


def print_notes(console: Console, cov: list[str], notes, width: int) -> None:
    """The coverage headlines whole (wrapped at words; one per rank in a merged report), the
    details (long lists of names) one line each, then the notes (dim, wrapped), each once."""
    for i, line in enumerate(cov):
        print_line(console, line, width, wrap=i == 0 or line.startswith("coverage of "))
    seen = set(cov)
    for n in notes:
        if n not in seen:
            seen.add(n)
            print_line(console, n, width, style="dim", wrap=True)


__all__ = [
    "FLAG_CODES",
    "compact_shape",
    "flag_codes",
    "flag_legend",
    "ops_table",
    "print_line",
    "print_notes",
    "print_summary",
    "sheet_view",
    "shorten_end",
    "shorten_middle",
    "table_text",
    "timeline_table",
]
