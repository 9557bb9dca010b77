"""What ``perfreport analyze`` writes once a report exists, for one trace and for several
(``cli.py`` and ``multi/cli_run.py`` share it): ``--sheet`` on stdout, the workbook, the
HTML page, the CSV directory, each followed by a ``wrote …`` line on stderr unless quiet."""
from __future__ import annotations

import sys

from perfreport.errors import printable


def err_line(msg: str) -> None:
    """One ``perfreport: …`` line on stderr, control characters escaped."""
    sys.stderr.write(f"perfreport: {printable(msg)}\n")


def write_outputs(report, err_console, *, sheet=None, fmt="csv", xlsx=None, html=None,
                  csv_dir=None, protect=(), top=None, quiet=False) -> bool:
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
            err_console.print(f"wrote {xlsx}", highlight=False)
    if html is not None:
        report.to_html(html, top=top if top is not None else 50)
        if not quiet:
            err_console.print(f"wrote {html}", highlight=False)
    if csv_dir is not None:
        report.to_csv_dir(csv_dir, protect=protect)
        if not quiet:
            err_console.print(f"wrote {len(report.sheets)} CSV files to {csv_dir}", highlight=False)
    return True
