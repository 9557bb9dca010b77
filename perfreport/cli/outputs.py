"""What ``perfreport analyze`` writes once a report exists, for one trace and for several
(``cli/analyze.py`` and ``cli/multi.py`` share it): ``--sheet`` on stdout, then the workbook, the
HTML page and the CSV directory (with ``notes.csv``) in one transaction
(:func:`perfreport.writers.atomic.transaction`: all renamed into place together, or none), then a
``wrote …`` line each on stderr unless quiet, printed by the caller after the console summary."""

from __future__ import annotations

import sys

from perfreport.errors import BadInput, printable


# exit codes of every command: ok, internal error or failed check, bad input, written but incomplete
EXIT_OK, EXIT_FAIL, EXIT_BAD, EXIT_PARTIAL = 0, 1, 2, 3


def err_line(msg: str) -> None:
    """One ``perfreport: …`` line on stderr, control characters escaped."""
    sys.stderr.write(f"perfreport: {printable(msg)}\n")


class LazyConsole:
    """A ``rich.console.Console(**kwargs)`` made on first use: a run that prints nothing through
    it (``-q`` in a pipe) never imports rich (~0.03-0.06 CPU s). :meth:`rich` is the console."""

    def __init__(self, **kwargs) -> None:
        self._kwargs, self._console = kwargs, None

    def rich(self):
        if self._console is None:
            from rich.console import Console

            self._console = Console(**self._kwargs)
        return self._console

    def __getattr__(self, name):  # print, width, ...: the console's
        return getattr(self.rich(), name)


def output_plan(inputs, xlsx, named: bool, html_path, html_named: bool, csv_dir):
    """Every file ``analyze`` writes, to check before any work (one trace or several)."""
    from perfreport.writers.plan import OutputPlan

    plan = OutputPlan(inputs)
    plan.file(xlsx, "-o" if named else "the default workbook")
    plan.file(html_path, "--html" if html_named else "--with-html (the workbook's name with .html)")
    return plan.directory(csv_dir, "--csv-dir")


def one_trace_flags(*, per_rank, engine, ray_address, keep_going) -> None:
    """With one trace, the flags of several are a usage error: they name an output or an
    engine that would silently not be used (``--jobs`` only warns: it is a speed hint)."""
    for flag, v in (
        ("--per-rank", per_rank),
        ("--engine", engine),
        ("--ray-address", ray_address),
        ("--keep-going", keep_going or None),
    ):
        if v is not None:
            raise BadInput(flag, "needs several traces (one per rank); one trace was given")


def write_outputs(
    report,
    err_console,
    *,
    sheet=None,
    fmt=None,
    xlsx=None,
    html=None,
    csv_dir=None,
    protect=(),
    top=None,
    quiet=False,
    on_stage=None,
) -> list[str] | None:
    """Print ``--sheet`` (or, for ``--format json`` alone, the whole report) and write the
    requested files; returns the ``wrote …`` lines for the caller to print once the
    transaction is committed (the outermost ``transaction`` block: one here, or the caller's)
    and after the console summary, so the paths are the last lines seen. None (nothing
    written) when the sheet name matches no sheet: the caller exits 2 after the one line
    printed here."""
    from perfreport.writers.atomic import transaction
    from perfreport.writers.text import print_sheet, write_stdout

    stage = on_stage or (lambda _text: None)
    if sheet is not None:
        try:
            print_sheet(report.sheet(sheet), fmt or "csv", coverage=report.coverage, provenance=report.provenance)
        except KeyError as exc:
            err_line(f"--sheet: {exc.args[0]}")
            return None
    elif fmt == "json":
        write_stdout(report.to_json())
    from perfreport.writers.cells import shared_columns

    wrote, warnings = [], []
    with transaction(), shared_columns():  # (the workbook and the CSVs read one set of columns)
        if xlsx is not None:
            stage("writing the workbook")
            warnings += report.to_excel(xlsx)
            wrote.append(f"wrote {xlsx}")
        if html is not None:
            stage("writing the HTML page")
            report.to_html(html, top=top if top is not None else 50)
            wrote.append(f"wrote {html}")
        if csv_dir is not None:
            stage("writing the CSV files")
            n = len(report.to_csv_dir(csv_dir, protect=protect))
            wrote.append(f"wrote {n} CSV files (one per sheet, and notes.csv) to {csv_dir}")
    for w in warnings:
        err_line(f"warning: {w}")
    return [] if quiet else wrote


def print_lines(err_console, lines) -> None:
    for line in lines:
        err_console.print(line, highlight=False, soft_wrap=True, markup=False)


def check_format(fmt, sheet, choices) -> str | None:
    """The usage error for ``--format`` (None if fine): a format not in ``choices``, or one
    other than json without ``--sheet`` (json alone prints the whole report)."""
    if fmt is None:
        return None
    if fmt not in choices:
        return f"--format must be one of {', '.join(choices)}, not {fmt!r}"
    if sheet is None and fmt != "json":
        return (
            f"--format {fmt} needs --sheet NAME (the sheet to print); every sheet as CSV: --csv-dir DIR; "
            "the whole report on stdout: --format json"
        )
    return None
