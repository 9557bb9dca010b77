"""One side of a diff: a trace (analyzed here) or a report perfreport wrote.

Accepted reports: a workbook (``.xlsx``), the JSON of ``Report.to_json`` / ``--json`` (``{"source", "notes", "sheets"}``),
the JSON of ``--sheet unified_perf_summary --format json`` (``{"sheet", "notes", "rows"}``),
and a ``--csv-dir`` directory (``unified_perf_summary.csv``, optionally ``gpu_timeline.csv``).
Anything else is read as a Kineto trace. A report is recognised by its first JSON key, so a
trace is never parsed twice.

Reports are read within limits, each breach one :class:`BadInput` line: a workbook's
members may inflate to :data:`MAX_MEMBER_BYTES` each and :data:`MAX_INFLATED_BYTES` in all (the
sizes its zip directory declares; zipfile stops at them), a report JSON to
:data:`MAX_INFLATED_BYTES`, a sheet may hold :data:`MAX_ROWS` rows and a workbook cell 32,767
characters (Excel's limit; perfreport shortens longer text). Every op row needs a numeric
``time sum (µs)`` and the other numeric columns, where present, must hold numbers.
"""

from __future__ import annotations

import csv
import gzip
import math
import re
import zipfile
import msgspec
from msgspec import field
from pathlib import Path

from perfreport.diff import context
from perfreport.errors import BadInput
from perfreport.tables import columns as C

OPS_SHEET = "unified_perf_summary"
TIMELINE_SHEET = "gpu_timeline"
_REPORT_HEAD = re.compile(rb'^\s*\{\s*"(source|sheet)"\s*:')
# numeric columns of the two sheets the diff reads (CSV cells are text)
_NUM = {C.COUNT, C.TIME_SUM_US, C.ROOFLINE_MEAN_PCT, C.TIME_MS, C.PERCENT_OF_TOTAL_PCT}
REQUIRED = {OPS_SHEET: C.TIME_SUM_US}  # the column the diff is about: never read as 0
MAX_ROWS = 200_000  # one row per op signature: real reports have hundreds to a few thousand
MAX_MEMBER_BYTES = 256 << 20
MAX_INFLATED_BYTES = 1 << 30
MAX_WORKBOOK_CELL = 32_767


class Side(msgspec.Struct):
    """What the diff needs of one input: the unified rows, the GPU timeline rows, notes."""

    source: str
    ops: list[dict]
    timeline: list[dict] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    kind: str = "trace"  # 'trace' | 'workbook' | 'report JSON' | 'CSV dir'
    context: dict = field(default_factory=dict)  # GPU, GPU spec, world size, rank (diff/context.py)
    sha256: str | None = None  # of the input file (None for a CSV directory)


def load_side(path, *, analyze_kw: dict | None = None) -> Side:
    """Read ``path`` as a report if it is one, else analyze it as a trace."""
    p = Path(str(path))
    if p.is_dir():
        return _csv_dir(p)
    if not p.exists():
        raise BadInput(str(path), "no such file or directory")
    head = _head(p)
    if head[:4] == b"PK\x03\x04":
        return _with_sha(_workbook(p), p)
    if _REPORT_HEAD.match(head):
        return _with_sha(_report_json(p), p)
    from perfreport.pipeline import analyze

    rep = analyze(str(p), timeline=False, **(analyze_kw or {}))  # diff writes no HTML page
    ops = rep.sheet(OPS_SHEET).records()
    tl = rep.sheet(TIMELINE_SHEET).records() if TIMELINE_SHEET in rep.sheet_names else []
    ctx = context.from_meta(rep.meta, rep.spec.key if rep.spec is not None else None)
    notes = [n for n in rep.notes if n.startswith("GPU spec")]
    return Side(rep.source, ops, tl, notes, "trace", ctx, sha256=rep.provenance.get("input SHA-256"))


def _with_sha(side: Side, p: Path) -> Side:
    import hashlib

    h = hashlib.sha256()
    with open(p, "rb") as fh:
        for b in iter(lambda: fh.read(1 << 20), b""):
            h.update(b)
    side.sha256 = h.hexdigest()
    return side


def _workbook(p: Path) -> Side:
    """A workbook perfreport wrote: header row, then one row per record."""
    from openpyxl import load_workbook

    _check_zip(p)
    try:
        wb = load_workbook(p, read_only=True, data_only=True)
    except Exception as exc:  # openpyxl raises many kinds for a bad file
        raise BadInput(str(p), f"unreadable workbook ({type(exc).__name__}: {exc})") from None
    try:
        if OPS_SHEET not in wb.sheetnames:
            raise BadInput(str(p), f"workbook has no {OPS_SHEET} sheet (not a perfreport report)")

        def records(name):
            ws = wb[name]
            if (ws.max_row or 0) > MAX_ROWS + 1:  # the sheet's declared dimension
                raise BadInput(str(p), f"{name} has {ws.max_row - 1} rows, more than the {MAX_ROWS} a diff reads")
            it = ws.iter_rows(values_only=True)
            head = [str(h) if h is not None else "" for h in next(it, ())]
            out = []
            for row in it:
                if not any(v is not None for v in row):
                    continue
                if len(out) >= MAX_ROWS:
                    raise BadInput(str(p), f"{name} has more than the {MAX_ROWS} rows a diff reads")
                for v in row:
                    if isinstance(v, str) and len(v) > MAX_WORKBOOK_CELL:
                        raise BadInput(
                            str(p), f"{name} has a cell of {len(v)} characters (a workbook cell holds 32767)"
                        )
                out.append({h: ("" if v is None and h not in _NUM else v) for h, v in zip(head, row)})
            return checked_rows(out, p, name)

        tl = records(TIMELINE_SHEET) if TIMELINE_SHEET in wb.sheetnames else []
        return Side(str(p), records(OPS_SHEET), tl, [], "workbook")
    finally:
        wb.close()


def _check_zip(p: Path) -> None:
    """The inflated sizes a workbook's zip directory declares, against the limits."""
    try:
        with zipfile.ZipFile(p) as z:
            infos = z.infolist()
    except (OSError, zipfile.BadZipFile, ValueError) as exc:
        raise BadInput(str(p), f"unreadable workbook ({type(exc).__name__}: {exc})") from None
    big = max(infos, key=lambda i: i.file_size, default=None)
    if big is not None and big.file_size > MAX_MEMBER_BYTES:
        raise BadInput(
            str(p), f"workbook part {big.filename} inflates to {big.file_size:,} bytes (limit {MAX_MEMBER_BYTES:,})"
        )
    total = sum(i.file_size for i in infos)
    if total > MAX_INFLATED_BYTES:
        raise BadInput(str(p), f"workbook inflates to {total:,} bytes (limit {MAX_INFLATED_BYTES:,})")


def _finite(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def checked_rows(rows: list[dict], p, sheet: str) -> list[dict]:
    """``rows`` if the sheet's required column is in every row and its numeric columns hold
    numbers (empty allowed where not required); else one BadInput line naming row and column."""
    if len(rows) > MAX_ROWS:
        raise BadInput(str(p), f"{sheet} has {len(rows)} rows, more than the {MAX_ROWS} a diff reads")
    need = REQUIRED.get(sheet)
    for i, r in enumerate(rows):
        if need is not None and need not in r:
            raise BadInput(str(p), f"{sheet} row {i + 1} has no {need!r} column (not a perfreport report?)")
        for k in _NUM:
            v = r.get(k)
            if k == need and not _finite(v):
                raise BadInput(str(p), f"{sheet} row {i + 1}: {k!r} is {_short(v)}, not a number")
            if v not in (None, "") and not _finite(v):
                raise BadInput(str(p), f"{sheet} row {i + 1}: {k!r} is {_short(v)}, not a number")
    return rows


def _short(v) -> str:
    t = repr(v)
    return t if len(t) <= 40 else t[:37] + "..."


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
            raw = fh.read(MAX_INFLATED_BYTES + 1)
    except OSError as exc:
        raise BadInput(str(p), f"unreadable report JSON ({exc})") from None
    if len(raw) > MAX_INFLATED_BYTES:
        raise BadInput(str(p), f"report JSON is larger than {MAX_INFLATED_BYTES:,} bytes (inflated)")
    try:
        doc = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise BadInput(str(p), f"unreadable report JSON ({exc})") from None
    del raw
    if not isinstance(doc, dict):
        raise BadInput(str(p), "report JSON is not an object")
    if "sheets" in doc:
        sheets = doc.get("sheets") or {}
        if not isinstance(sheets, dict) or not isinstance(sheets.get(OPS_SHEET), dict):
            raise BadInput(str(p), f"report JSON has no {OPS_SHEET} sheet")
        tl_sheet = sheets.get(TIMELINE_SHEET)
        tl = tl_sheet.get("rows", []) if isinstance(tl_sheet, dict) else []
        return Side(
            str(doc.get("source") or p),
            checked_rows(_rows(sheets[OPS_SHEET].get("rows"), p), p, OPS_SHEET),
            checked_rows(_rows(tl, p), p, TIMELINE_SHEET),
            [n for n in doc.get("notes", []) if str(n).startswith("GPU spec")],
            "report JSON",
            context.from_notes(doc.get("notes"), doc.get("spec")),
        )
    if doc.get("sheet") != OPS_SHEET:
        raise BadInput(str(p), f"sheet JSON is {doc.get('sheet')!r}, the diff needs {OPS_SHEET}")
    return Side(str(p), checked_rows(_rows(doc.get("rows"), p), p, OPS_SHEET), [], [], "report JSON")


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
    tl = checked_rows(_read_csv(tl_csv), tl_csv, TIMELINE_SHEET) if tl_csv.is_file() else []
    return Side(str(d), checked_rows(_read_csv(ops_csv), ops_csv, OPS_SHEET), tl, [], "CSV dir")


def _read_csv(p: Path) -> list[dict]:
    try:
        with open(p, newline="", encoding="utf-8") as fh:
            rows = []
            for r in csv.DictReader(fh):
                if len(rows) >= MAX_ROWS:
                    raise BadInput(str(p), f"more than the {MAX_ROWS} rows a diff reads")
                rows.append(r)
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


__all__ = ["MAX_ROWS", "Side", "checked_rows", "load_side", "OPS_SHEET", "TIMELINE_SHEET"]
