"""``perfreport diff A B``: two traces or reports compared op by op."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional

import typer

from perfreport.cli.outputs import EXIT_BAD, EXIT_FAIL, EXIT_OK, err_line as _err
from perfreport.errors import BadInput


def diff(
    a: str = typer.Argument(..., help="Before: a trace, a report JSON (--json / --format json) or a --csv-dir"),
    b: str = typer.Argument(..., help="After: same kinds as A"),
    output: Optional[Path] = typer.Option(None, "-o", "--output", help="Write the diff workbook (.xlsx)"),
    csv_dir: Optional[Path] = typer.Option(None, "--csv-dir", help="Also write one CSV per diff sheet into DIR"),
    json_out: Optional[Path] = typer.Option(None, "--json", help="Also write the diff as JSON"),
    sheet: Optional[str] = typer.Option(
        None, "--sheet", help="Print one sheet to stdout (diff_summary, diff_ops, diff_gpu_timeline)"
    ),
    fmt: str = typer.Option("csv", "--format", help="Format for --sheet: csv, json or table"),
    arch_a: Optional[str] = typer.Option(None, "--arch-a", help="GPU spec for trace A [default: detected]"),
    arch_b: Optional[str] = typer.Option(None, "--arch-b", help="GPU spec for trace B [default: detected]"),
    fail_if_slower: Optional[float] = typer.Option(
        None,
        "--fail-if-slower",
        metavar="PCT",
        help="Exit 1 if the total or any of the top N rows is more than PCT percent slower in B (PCT >= 0; 100: twice as long)",
    ),
    top: int = typer.Option(10, "--top", help="Rows checked by --fail-if-slower and shown in the summary"),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No summary"),
    summary: Optional[bool] = typer.Option(
        None, "--summary/--no-summary", help="Print the console summary [default: unless --sheet]"
    ),
):
    """Compare two traces (or reports): matched ops, time A/B, delta, speedup, GPU timelines."""
    from perfreport.diff import diff as run_diff, regressions

    if fmt not in ("csv", "json", "table"):
        _err(f"--format must be csv, json or table, not {fmt!r}")
        raise typer.Exit(EXIT_BAD)
    try:
        from perfreport.cli.numbers import MAX_TOP, number
        from perfreport.writers.plan import OutputPlan
        from perfreport.writers.targets import input_files

        number("--fail-if-slower", fail_if_slower, 0.0, unit=" (percent slower)")
        number("--top", top, 0, MAX_TOP, integer=True)
        inputs = input_files("-", others={a: "input A", b: "input B"})
        OutputPlan(inputs).file(output, "-o").file(json_out, "--json").directory(csv_dir, "--csv-dir").check()
        report = run_diff(a, b, arch_a=arch_a, arch_b=arch_b)
    except BadInput as exc:
        _err(str(exc))
        raise typer.Exit(EXIT_BAD)
    from perfreport.writers.text import print_sheet

    if sheet is not None:
        try:
            print_sheet(report.sheet(sheet), fmt)
        except KeyError as exc:
            _err(f"--sheet: {exc.args[0]}")
            raise typer.Exit(EXIT_BAD)
    from perfreport.writers.atomic import transaction

    warnings = []
    try:
        with transaction():  # the workbook, the CSVs and the JSON: all renamed into place, or none
            if output is not None:
                warnings = report.to_excel(output)
            if csv_dir is not None:
                report.to_csv_dir(csv_dir, protect=inputs)
            if json_out is not None:
                report.to_json(json_out)
    except BadInput as exc:
        _err(str(exc))
        raise typer.Exit(EXIT_BAD)
    for w in warnings:
        _err(f"warning: {w}")
    if (summary if summary is not None else sheet is None) and not quiet:
        from perfreport.writers.diff_console import print_diff_summary
        from rich.console import Console

        print_diff_summary(report, Console() if sys.stdout.isatty() else Console(width=180), top)
    if fail_if_slower is not None:
        bad = regressions(report, fail_if_slower, top)
        for line in bad:
            _err(f"slower by more than {fail_if_slower:g}%: {line}")
        if bad:
            raise typer.Exit(EXIT_FAIL)
    raise typer.Exit(EXIT_OK)
