"""What ``perfreport analyze`` writes once a report exists, for one trace and for several
(``cli/analyze.py`` and ``cli/multi.py`` share it): ``--sheet`` on stdout, the workbook, the
HTML page, the CSV directory, each followed by a ``wrote …`` line on stderr unless quiet."""

from __future__ import annotations

import sys

from perfreport.errors import printable


# exit codes of every command: ok, internal error or failed check, bad input, written but incomplete
EXIT_OK, EXIT_FAIL, EXIT_BAD, EXIT_PARTIAL = 0, 1, 2, 3


def err_line(msg: str) -> None:
    """One ``perfreport: …`` line on stderr, control characters escaped."""
    sys.stderr.write(f"perfreport: {printable(msg)}\n")


def write_outputs(
    report, err_console, *, sheet=None, fmt="csv", xlsx=None, html=None, csv_dir=None, protect=(), top=None, quiet=False
) -> bool:
    """Print ``--sheet`` and write the requested files. False (nothing written) when the
    sheet name matches no sheet: the caller exits 2 after the one line printed here."""
    from perfreport.writers.text import print_sheet

    if sheet is not None:
        try:
            print_sheet(report.sheet(sheet), fmt, coverage=report.coverage)
        except KeyError as exc:
            err_line(f"--sheet: {exc.args[0]}")
            return False
    if xlsx is not None:
        for w in report.to_excel(xlsx):
            err_line(f"warning: {w}")
        if not quiet:
            err_console.print(f"wrote {xlsx}", highlight=False, soft_wrap=True)
    if html is not None:
        report.to_html(html, top=top if top is not None else 50)
        if not quiet:
            err_console.print(f"wrote {html}", highlight=False, soft_wrap=True)
    if csv_dir is not None:
        report.to_csv_dir(csv_dir, protect=protect)
        if not quiet:
            err_console.print(f"wrote {len(report.sheets)} CSV files to {csv_dir}", highlight=False, soft_wrap=True)
    return True
