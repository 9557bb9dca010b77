#!/usr/bin/env python3
"""Workbook and CSVs against the analysis itself, on traces with many distinct ops and kernels.

    python benchmarks/bench_outputs.py [--baseline REV] [--keep DIR] [TRACE ...]

Without TRACE it builds two cases with benchmarks/make_wide_trace.py from the bundled H100 trace:
``shapes``: 6 copies, 15,000 token counts (109k events, ~34k sheet rows, as the real training
trace of issue 21) and ``kernels``: 14 copies, 20,000 distinct kernel names. For each trace, in a
fresh child process: the analysis (``perfreport.analyze``: read, tree, passes, models, sheets),
then ``Report.to_excel`` and ``Report.to_csv_dir`` inside one ``writers.cells.shared_columns()``, as
the command line writes them (the sheets' columns worked out once for both), CPU seconds (``time.process_time``; wall
seconds too, which depend on the other jobs of a shared machine). ``--baseline REV`` also writes
the workbook with ``perfreport/writers/excel.py`` as it was at git revision REV (openpyxl), in the
same child. The ratio is (workbook + CSVs) / analysis; the issue's target is <= 0.5.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CASES = {"shapes": ["--copies", "6", "--shapes", "15000"], "kernels": ["--copies", "14", "--kernels", "20000"]}

_CHILD = r"""
import json, sys, tempfile, time
from pathlib import Path
sys.path.insert(0, sys.argv[1])
def timed(fn):
    w, c = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.perf_counter() - w, time.process_time() - c
import perfreport
rep, aw, ac = timed(lambda: perfreport.analyze(sys.argv[2]))
d = Path(tempfile.mkdtemp())
try:  # the command line writes both in one shared_columns() (a checkout before it: no sharing)
    from perfreport.writers.cells import shared_columns
except ImportError:
    from contextlib import nullcontext as shared_columns
with shared_columns():
    _, xw, xc = timed(lambda: rep.to_excel(d / "r.xlsx"))
    _, cw, cc = timed(lambda: rep.to_csv_dir(d / "csv"))
res = {"analysis": [aw, ac], "workbook": [xw, xc], "csv": [cw, cc],
       "rows": sum(len(s.rows) for s in rep.sheets), "cells": sum(len(s.rows) * len(s.columns) for s in rep.sheets),
       "xlsx_mb": (d / "r.xlsx").stat().st_size / 1e6}
if len(sys.argv) > 3:
    import importlib.util
    spec = importlib.util.spec_from_file_location("excel_baseline", sys.argv[3])
    mod = importlib.util.module_from_spec(spec); spec.loader.exec_module(mod)
    from perfreport.writers.summary import coverage_lines
    _, bw, bc = timed(lambda: mod.write_workbook(rep.sheets, d / "b.xlsx", rep.notes, spec=rep.spec, coverage=coverage_lines(rep)))
    res["baseline"] = [bw, bc]
print(json.dumps(res))
"""


def run_case(trace: Path, baseline: Path | None) -> dict:
    cmd = [sys.executable, "-c", _CHILD, str(ROOT), str(trace)] + ([str(baseline)] if baseline else [])
    out = subprocess.run(cmd, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("traces", nargs="*")
    ap.add_argument("--baseline", help="git revision whose perfreport/writers/excel.py is timed too")
    ap.add_argument("--keep", help="build the cases in (or reuse them from) this folder")
    a = ap.parse_args()
    tmp = tempfile.TemporaryDirectory()
    work = Path(a.keep or tmp.name)
    work.mkdir(parents=True, exist_ok=True)
    traces = [(Path(t).name, Path(t)) for t in a.traces]
    if not traces:
        for name, args in CASES.items():
            p = work / f"wide_{name}.json"
            if not p.exists():
                subprocess.run(
                    [sys.executable, str(ROOT / "benchmarks" / "make_wide_trace.py"), str(p), *args], check=True
                )
            traces.append((name, p))
    base = None
    if a.baseline:
        src = subprocess.run(
            ["git", "show", f"{a.baseline}:perfreport/writers/excel.py"],
            capture_output=True,
            text=True,
            check=True,
            cwd=ROOT,
        ).stdout
        base = work / "excel_baseline.py"
        base.write_text(src)
    print(
        "| trace | MB | sheet rows | cells | analysis CPU s | workbook CPU s | CSVs CPU s | (workbook + CSVs) / analysis |",
        end="",
    )
    print(" baseline workbook CPU s | baseline / this |" if base else "")
    print("|---|---|---|---|---|---|---|---|" + ("---|---|" if base else ""))
    t0 = time.perf_counter()
    for name, p in traces:
        r = run_case(p, base)
        a_c, x_c, c_c = r["analysis"][1], r["workbook"][1], r["csv"][1]
        line = (
            f"| {name} | {p.stat().st_size / 1e6:.1f} | {r['rows']:,} | {r['cells']:,} | {a_c:.2f} | {x_c:.2f} | "
            f"{c_c:.2f} | {(x_c + c_c) / a_c:.2f} |"
        )
        if base:
            line += f" {r['baseline'][1]:.2f} | {r['baseline'][1] / x_c:.1f}x |"
        print(line, flush=True)
    print(f"(wall {time.perf_counter() - t0:.0f} s; CPU seconds are the child's own process time)")
    tmp.cleanup()


if __name__ == "__main__":
    main()
