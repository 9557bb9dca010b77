#!/usr/bin/env python3
"""Workbook writer on a synthetic unified sheet: N rows x 32 columns (names, shapes, numbers),
time and peak RSS of Report.to_excel (ordering, fitted widths, data bars, columns sheet).

    python benchmarks/bench_workbook.py [ROWS] [--baseline REV]   # default 100000 rows

``--baseline REV`` also times ``perfreport/writers/excel.py`` as it was at git revision REV
(its ``write_workbook(sheets, path, notes)``) on the same sheet: REV before issue 21 is the
openpyxl write-only writer, run both as installed (pure-Python XML) and, when ``lxml`` can be
imported, with it (openpyxl picks lxml up by itself). ``--xlsxwriter`` also writes the same
cells with xlsxwriter's ``constant_memory`` mode (header format, per-column number formats,
widths, frozen panes, autofilter, data bars), if it can be imported. Put the candidates on the
path for the run only, e.g. ``pip install --target /tmp/alt lxml xlsxwriter`` and
``PYTHONPATH=/tmp/alt``. CPU seconds are the process's own (``time.process_time``): on a
shared machine they, not wall seconds, compare runs.
"""

from __future__ import annotations

import random
import resource
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from perfreport.report import Report  # noqa: E402
from perfreport.tables.sheet import Sheet  # noqa: E402

ARGS = [a for a in sys.argv[1:] if not a.startswith("--")]
XLSXWRITER = "--xlsxwriter" in sys.argv
BASE = sys.argv[sys.argv.index("--baseline") + 1] if "--baseline" in sys.argv else None
if BASE in ARGS:
    ARGS.remove(BASE)
N = int(ARGS[0]) if ARGS else 100_000
NUM = [
    "count",
    "time sum (µs)",
    "time mean (µs)",
    "time median (µs)",
    "time std (µs)",
    "time min (µs)",
    "time max (µs)",
    "GFLOP",
    "data moved (MB)",
    "FLOP/byte",
    "TFLOP/s mean",
    "TB/s mean",
    "roofline time (µs)",
    "roofline mean (%)",
    "roofline median (%)",
    "roofline min (%)",
    "roofline max (%)",
    "roofline std (%)",
    "percent (%)",
    "cumulative percent (%)",
    "example ts (µs)",
]
TXT = [
    "name",
    "category",
    "perf model",
    "reason",
    "compute spec",
    "bound",
    "input dims",
    "input types",
    "input strides",
    "concrete inputs",
    "kernels",
]


def sheet() -> Sheet:
    rnd = random.Random(0)
    rows = []
    for i in range(N):
        r = [
            f"aten::op_{i % 500}",
            "GEMM",
            "GEMM",
            "",
            "matrix_bf16",
            "compute",
            f"({rnd.randint(1, 9000)}, 1024), (1024, 2816)",
            "c10::BFloat16, c10::BFloat16",
            "(1024, 1), (1, 1024)",
            "",
            f"sm90_xmma_gemm_{i % 50} x 3",
        ]
        r += [rnd.randint(1, 100)] + [rnd.random() * 10 ** rnd.randint(0, 6) for _ in NUM[1:]]
        rows.append(r)
    return Sheet(
        "unified_perf_summary", TXT + NUM, rows, {c: "0.000" for c in NUM[1:]} | {"GFLOP": "0.000000", "count": "0"}
    )


def rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def baseline_writer(rev: str):
    import importlib.util
    import subprocess

    src = subprocess.run(
        ["git", "show", f"{rev}:perfreport/writers/excel.py"],
        capture_output=True,
        text=True,
        check=True,
        cwd=Path(__file__).resolve().parent.parent,
    ).stdout
    f = Path(tempfile.mkdtemp()) / "excel_baseline.py"
    f.write_text(src)
    spec = importlib.util.spec_from_file_location("excel_baseline", f)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.write_workbook


def xlsxwriter_book(sh: Sheet, out: Path) -> None:
    """The same sheet through xlsxwriter (constant_memory: rows streamed, each written once)."""
    import xlsxwriter

    from perfreport.writers.cells import rows as plain_rows
    from perfreport.writers.excel import column_width, number_format

    wb = xlsxwriter.Workbook(str(out), {"constant_memory": True, "strings_to_formulas": False})
    ws = wb.add_worksheet(sh.name)
    head = wb.add_format({"bold": True, "bg_color": "#DDEBF7", "text_wrap": True, "valign": "top"})
    data = list(plain_rows(sh))
    fmts = []
    for i, c in enumerate(sh.columns):
        col = [r[i] for r in data[:5000]]
        nums = [v for v in col if isinstance(v, (int, float)) and not isinstance(v, bool)]
        f = number_format(sh.formats.get(c), nums) if nums else None
        fmts.append(wb.add_format({"num_format": f}) if f else None)
        ws.set_column(i, i, column_width(c, col, f))
    ws.freeze_panes(1, 1)
    ws.autofilter(0, 0, len(data), len(sh.columns) - 1)
    ws.set_landscape()
    ws.fit_to_pages(1, 0)
    ws.repeat_rows(0)
    for i, c in enumerate(sh.columns):
        if c in ("roofline mean (%)", "roofline median (%)"):
            ws.conditional_format(
                1,
                i,
                len(data),
                i,
                {
                    "type": "data_bar",
                    "min_type": "num",
                    "min_value": 0,
                    "max_type": "num",
                    "max_value": 100,
                    "bar_color": "#5B9BD5",
                },
            )
    for j, c in enumerate(sh.columns):
        ws.write_string(0, j, c, head)
    for n, r in enumerate(data, 1):
        for j, v in enumerate(r):
            if isinstance(v, str):
                ws.write_string(n, j, v)
            elif v is not None:
                ws.write_number(n, j, v, fmts[j])
    wb.close()


def timed(fn):
    w, c = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - w, time.process_time() - c


def main() -> None:
    w0, c0 = time.perf_counter(), time.process_time()
    sh = sheet()
    rows = [("build synthetic sheet", time.perf_counter() - w0, time.process_time() - c0, rss_mb(), None)]
    rep = Report(source="synthetic", sheets=[sh], notes=["source: synthetic"])
    with tempfile.TemporaryDirectory() as d:
        out = Path(d) / "b.xlsx"
        w, c = timed(lambda: rep.to_excel(out))
        rows.append(("Report.to_excel (this tree)", w, c, rss_mb(), out.stat().st_size))
        if BASE:
            old = baseline_writer(BASE)
            w, c = timed(lambda: old([sh], out, ["source: synthetic"]))
            try:
                import lxml  # noqa: F401  (openpyxl uses it when it can import it)

                how = "openpyxl with lxml"
            except ImportError:
                how = "openpyxl, no lxml"
            rows.append((f"write_workbook at {BASE} ({how})", w, c, rss_mb(), out.stat().st_size))
        if XLSXWRITER:
            w, c = timed(lambda: xlsxwriter_book(sh, out))
            rows.append(("xlsxwriter constant_memory (same cells and formats)", w, c, rss_mb(), out.stat().st_size))
    print(f"| step ({N:,} rows x {len(sh.columns)} cols) | wall s | CPU s | peak RSS (MB) | file (MB) |")
    print("|---|---|---|---|---|")
    for name, w, c, r, size in rows:
        print(f"| {name} | {w:.1f} | {c:.1f} | {r:.0f} | {'' if size is None else f'{size / 1e6:.1f}'} |")


if __name__ == "__main__":
    main()
