"""One side of a diff: a trace (analyzed here) or a report perfreport wrote.

Accepted reports: a workbook (``.xlsx``), the JSON of ``Report.to_json`` / ``--json`` (``{"source", "notes", "sheets"}``),
the JSON of ``--sheet unified_perf_summary --format json`` (``{"sheet", "notes", "rows"}``),
and a ``--csv-dir`` directory (``unified_perf_summary.csv``, optionally ``gpu_timeline.csv``).
Anything else is read as a Kineto trace. A report is recognised by its first JSON key, so a
trace is never parsed twice.
"""

from __future__ import annotations

import csv
import gzip
import re
from dataclasses import dataclass, field
from pathlib import Path

from perfreport.diff import context
from perfreport.errors import BadInput
from perfreport.tables import columns as C

OPS_SHEET = "unified_perf_summary"
TIMELINE_SHEET = "gpu_timeline"
_REPORT_HEAD = re.compile(rb'^\s*\{\s*"(source|sheet)"\s*:')
# numeric columns of the two sheets the diff reads (CSV cells are text)
_NUM = {C.COUNT, C.TIME_SUM_US, C.ROOFLINE_MEAN_PCT, C.TIME_MS, C.PERCENT_OF_TOTAL_PCT}


@dataclass
class Side:
    """What the diff needs of one input: the unified rows, the GPU timeline rows, notes."""

    source: str
    ops: list[dict]
    timeline: list[dict] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    kind: str = "trace"  # 'trace' | 'workbook' | 'report JSON' | 'CSV dir'
    context: dict = field(default_factory=dict)  # GPU, GPU spec, world size, rank (diff/context.py)


def load_side(path, *, analyze_kw: dict | None = None) -> Side:
    """Read ``path`` as a report if it is one, else analyze it as a trace."""
    p = Path(str(path))
    if p.is_dir():
        return _csv_dir(p)
    if not p.exists():
        raise BadInput(str(path), "no such file or directory")
    head = _head(p)
    if head[:4] == b"PK\x03\x04":
        return _workbook(p)
    if _REPORT_HEAD.match(head):
        return _report_json(p)
    from perfreport.pipeline import analyze

    rep = analyze(str(p), **(analyze_kw or {}))
    ops = rep.sheet(OPS_SHEET).records()
    tl = rep.sheet(TIMELINE_SHEET).records() if TIMELINE_SHEET in rep.sheet_names else []
    ctx = context.from_meta(rep.meta, rep.spec.key if rep.spec is not None else None)
    return Side(rep.source, ops, tl, [n for n in rep.notes if n.startswith("GPU spec")], "trace", ctx)


def _workbook(p: Path) -> Side:
    """A workbook perfreport wrote: header row, then one row per record."""
    from openpyxl import load_workbook

    try:
        wb = load_workbook(p, read_only=True, data_only=True)
    except Exception as exc:  # openpyxl raises many kinds for a bad file
        raise BadInput(str(p), f"unreadable workbook ({type(exc).__name__}: {exc})") from None
    try:
        if OPS_SHEET not in wb.sheetnames:
            raise BadInput(str(p), f"workbook has no {OPS_SHEET} sheet (not a perfreport report)")

        def records(name):
            it = wb[name].iter_rows(values_only=True)
            head = [str(h) if h is not None else "" for h in next(it, ())]
            return [
                {h: ("" if v is None and h not in _NUM else v) for h, v in zip(head, row)}
                for row in it
                if any(v is not None for v in row)
            ]

        tl = records(TIMELINE_SHEET) if TIMELINE_SHEET in wb.sheetnames else []
        return Side(str(p), records(OPS_SHEET), tl, [], "workbook")
    finally:
        wb.close()


def _head(p: Path) -> bytes:
    with open(p, "rb") as fh:
        raw = fh.read(4096)
    if raw[:2] == b"\x1f\x8b":
        try:
            with gzip.open(p, "rb") as fh:
                raw = fh.read(4096)
        except OSError as exc:
            raise BadInput(str(p), f"unreadable gzip file ({exc})") from None
    return raw


def _report_json(p: Path) -> Side:
    import orjson

    try:
        opener = gzip.open if _is_gz(p) else open
        with opener(p, "rb") as fh:
            doc = orjson.loads(fh.read())
    except (OSError, orjson.JSONDecodeError) as exc:
        raise BadInput(str(p), f"unreadable report JSON ({exc})") from None
    if "sheets" in doc:
        sheets = doc.get("sheets") or {}
        if OPS_SHEET not in sheets:
            raise BadInput(str(p), f"report JSON has no {OPS_SHEET} sheet")
        tl = (sheets.get(TIMELINE_SHEET) or {}).get("rows", [])
        return Side(
            str(doc.get("source") or p),
            _rows(sheets[OPS_SHEET].get("rows"), p),
            _rows(tl, p),
            [n for n in doc.get("notes", []) if str(n).startswith("GPU spec")],
            "report JSON",
            context.from_notes(doc.get("notes"), doc.get("spec")),
        )
    if doc.get("sheet") != OPS_SHEET:
        raise BadInput(str(p), f"sheet JSON is {doc.get('sheet')!r}, the diff needs {OPS_SHEET}")
    return Side(str(p), _rows(doc.get("rows"), p), [], [], "report JSON")


def _is_gz(p: Path) -> bool:
    with open(p, "rb") as fh:
        return fh.read(2) == b"\x1f\x8b"


def _rows(rows, p: Path) -> list[dict]:
    if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
        raise BadInput(str(p), "report rows are not a list of objects")
    return rows


def _csv_dir(d: Path) -> Side:
    ops_csv = d / f"{OPS_SHEET}.csv"
    if not ops_csv.is_file():
        raise BadInput(str(d), f"directory has no {OPS_SHEET}.csv (not a perfreport --csv-dir)")
    tl_csv = d / f"{TIMELINE_SHEET}.csv"
    return Side(str(d), _read_csv(ops_csv), _read_csv(tl_csv) if tl_csv.is_file() else [], [], "CSV dir")


def _read_csv(p: Path) -> list[dict]:
    try:
        with open(p, newline="", encoding="utf-8") as fh:
            rows = list(csv.DictReader(fh))
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise BadInput(str(p), f"unreadable CSV ({exc})") from None
    out = []
    for r in rows:
        rec = {}
        for k, v in r.items():
            if k in _NUM:
                try:
                    rec[k] = None if v in ("", None) else (int(v) if k == C.COUNT else float(v))
                except ValueError:
                    raise BadInput(str(p), f"column {k!r} holds {v!r}, not a number") from None
            else:
                rec[k] = "" if v is None else v
        out.append(rec)
    return out


__all__ = ["Side", "load_side", "OPS_SHEET", "TIMELINE_SHEET"]
