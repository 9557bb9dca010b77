"""CSV and JSON output of sheets (files or stdout)."""

from __future__ import annotations

import contextlib
import csv
import io
import os
import sys
from pathlib import Path

import orjson

from perfreport.errors import BadInput
from perfreport.writers.atomic import atomic_path
from perfreport.writers.cells import columns, csv_field, rows, text


def csv_text(sheet) -> str:
    """The sheet as CSV: text through :func:`csv_field` (once per distinct text), numbers as the
    csv module writes them (``str``, which for a float is its ``repr``), None as an empty field.
    Built column by column (:func:`csv_column`), the bytes the csv module's writer gives."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow([csv_field(str(c)) for c in sheet.columns])
    cols = columns(sheet) if len(sheet.columns) > 1 else None  # one field alone has its own quoting
    if cols is None:
        memo: dict[str, str] = {}

        def field(v: str) -> str:
            f = memo.get(v)
            if f is None:
                f = memo[v] = csv_field(v)
            return f

        w.writerows([field(v) if type(v) is str else v for v in r] for r in rows(sheet))  # rows(): exact str
        return buf.getvalue()
    fields: dict = {}
    cells = [csv_column(c, fields) for c in cols]
    if sheet.rows:
        buf.write("\n".join(map(",".join, zip(*cells))))
        buf.write("\n")
    return buf.getvalue()


def _quoted(s: str) -> str:
    """``s`` as one field of a CSV row, quoted as the csv module quotes it (the excel dialect,
    minimal quoting): as it is without a delimiter, quote or line end; in quotes, quotes doubled,
    with a delimiter or a quote and no line end (never in :func:`csv_field`'s text: controls are
    escaped); else as the csv module writes it (its rules for line ends vary across versions)."""
    if "\n" in s or "\r" in s:
        b = io.StringIO()
        csv.writer(b, lineterminator="\n").writerow([s, ""])
        return b.getvalue()[:-2]  # less the empty last field's "," and the line end
    if '"' in s:
        return '"' + s.replace('"', '""') + '"'
    return '"' + s + '"' if "," in s else s


def csv_column(col: list, fields: dict) -> list[str]:
    """The CSV fields of one column of plain values (``fields``: text -> field, shared by the
    sheet's columns): a float is its ``repr``, an int or bool its ``str``, None empty, text
    :func:`csv_field` quoted as the csv module quotes it, anything else its ``str`` quoted."""
    types = set(map(type, col))
    if types <= {float}:
        return list(map(repr, col))
    if types <= {int}:
        return list(map(str, col))
    if types <= {str}:
        for v in set(col).difference(fields):
            fields[v] = _quoted(csv_field(v))
        return list(map(fields.__getitem__, col))
    return [_csv_cell(v, fields) for v in col]


def _csv_cell(v, fields: dict) -> str:
    t = type(v)
    if t is str:
        f = fields.get(v)
        if f is None:
            f = fields[v] = _quoted(csv_field(v))
        return f
    if v is None:
        return ""
    if t is float:
        return repr(v)
    if t is int or t is bool:
        return str(v)
    return _quoted(repr(v) if isinstance(v, float) else str(v))


def _tsv_cell(v) -> str:
    if v is None:
        return ""
    if isinstance(v, float):
        return repr(v)
    if isinstance(v, str):
        return " ".join(str(csv_field(v)).replace("\t", " ").splitlines())
    return str(v)


def tsv_text(sheet) -> str:
    """Tab-separated, one line per row, no quoting: a tab or line break inside a cell becomes a
    space, so ``cut -f`` and ``awk -F'\\t'`` split it right (op shapes hold commas)."""
    lines = ["\t".join(_tsv_cell(str(c)) for c in sheet.columns)]
    lines += ["\t".join(_tsv_cell(v) for v in r) for r in rows(sheet)]
    return "\n".join(lines) + "\n"


def _json_safe(v):
    return text(v) if isinstance(v, str) else v


def notes_sheet(report):
    """The report's notes as a sheet (``about``, ``note``): the rows of the workbook's notes
    sheet (coverage, report notes with the provenance, GPU spec details, sheet notes)."""
    from perfreport.tables.sheet import Sheet
    from perfreport.writers.excel import notes_rows
    from perfreport.writers.summary import coverage_lines

    return Sheet(
        "notes", ["about", "note"], notes_rows(report.sheets, report.notes, report.spec, coverage_lines(report))
    )


def json_text(sheet, coverage=None, provenance=None) -> str:
    """``{"sheet", "notes", "rows"}``, plus ``"coverage"`` (the report's coverage statement)
    and ``"provenance"`` (tool version, command line, input SHA-256) if given."""
    cols = [str(c) for c in sheet.columns]
    recs = [dict(zip(cols, map(_json_safe, r))) for r in rows(sheet)]
    doc = {"sheet": sheet.name, "notes": [text(n) for n in sheet.notes], "rows": recs}
    if coverage is not None:
        doc["coverage"] = coverage.to_dict()
    if provenance:
        doc["provenance"] = {k: text(v) for k, v in provenance.items()}
    return orjson.dumps(doc, option=orjson.OPT_INDENT_2).decode() + "\n"


def write_csv_dir(sheets, directory: str | Path, protect: dict | None = None) -> list[Path]:
    """One ``<sheet>.csv`` per sheet. Every target is checked first (none may be a
    non-regular file or one of the ``protect`` inputs) and every file is written to a
    temporary beside it before the first is renamed into place, so a refusal, a full disk
    or an interrupt leaves none of the new files (and no temporary)."""
    from perfreport.writers.targets import check_csv_names

    d = Path(directory)
    check_csv_names(d, [sh.name for sh in sheets], protect or {})
    created = []
    try:
        for parent in reversed([d, *d.parents]):
            if not parent.exists():
                parent.mkdir()
                created.append(parent)
    except OSError as exc:
        _rmdirs(created)
        raise BadInput(str(d), f"cannot create the CSV directory: {exc.strerror}") from None
    try:
        with contextlib.ExitStack() as stack:
            out = []
            for sh in sheets:
                p = d / f"{sh.name}.csv"
                tmp = stack.enter_context(atomic_path(p, suffix=".csv"))
                tmp.write_text(csv_text(sh), encoding="utf-8")
                out.append(p)
    except BaseException:
        _rmdirs(created)  # the directories this call made, if still empty
        raise
    return out  # the ExitStack renamed them all (in reverse order) once all were written


def _rmdirs(dirs) -> None:
    for p in reversed(dirs):
        try:
            p.rmdir()
        except OSError:
            break


def write_stdout(s: str, stream=None) -> None:
    """Write ``s`` to stdout; a full or closed stdout becomes one :class:`BadInput` line
    (and stdout is pointed at /dev/null so the interpreter's final flush stays quiet)."""
    stream = stream or sys.stdout
    try:
        stream.write(s)
        stream.flush()
    except BrokenPipeError:
        quiet_stdout()
        raise
    except OSError as exc:
        quiet_stdout()
        raise BadInput("<stdout>", f"write failed ({exc.strerror}); the sheet is incomplete") from None


def quiet_stdout() -> None:
    try:
        fd = os.open(os.devnull, os.O_WRONLY)
        os.dup2(fd, sys.stdout.fileno())
        os.close(fd)
    except (OSError, ValueError):
        pass


def print_sheet(sheet, fmt: str, stream=None, coverage=None, provenance=None) -> None:
    if fmt == "csv":
        write_stdout(csv_text(sheet), stream)
    elif fmt == "tsv":
        write_stdout(tsv_text(sheet), stream)
    elif fmt == "json":
        write_stdout(json_text(sheet, coverage, provenance), stream)
    else:
        from perfreport.writers.console import table_text

        write_stdout(table_text(sheet), stream)
