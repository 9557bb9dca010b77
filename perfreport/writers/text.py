"""CSV and JSON output of sheets (files or stdout)."""
from __future__ import annotations

import csv
import io
import sys
from pathlib import Path

import orjson

from perfreport.writers.atomic import atomic_path
from perfreport.writers.cells import rows


def csv_text(sheet) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(list(sheet.columns))
    for r in rows(sheet):
        w.writerow(["" if v is None else (repr(v) if isinstance(v, float) else v) for v in r])
    return buf.getvalue()


def json_text(sheet) -> str:
    cols = [str(c) for c in sheet.columns]
    recs = [dict(zip(cols, r)) for r in rows(sheet)]
    return orjson.dumps({"sheet": sheet.name, "notes": sheet.notes, "rows": recs},
                        option=orjson.OPT_INDENT_2).decode() + "\n"


def write_csv_dir(sheets, directory: str | Path) -> list[Path]:
    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    out = []
    for sh in sheets:
        p = d / f"{sh.name}.csv"
        with atomic_path(p, suffix=".csv") as tmp:
            tmp.write_text(csv_text(sh), encoding="utf-8")
        out.append(p)
    return out


def print_sheet(sheet, fmt: str, stream=None) -> None:
    stream = stream or sys.stdout
    if fmt == "csv":
        stream.write(csv_text(sheet))
    elif fmt == "json":
        stream.write(json_text(sheet))
    else:
        from perfreport.writers.console import sheet_table
        from rich.console import Console
        Console(file=stream, width=200).print(sheet_table(sheet))
