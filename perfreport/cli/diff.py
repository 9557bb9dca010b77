"""``perfreport diff A B``: two traces or reports compared op by op."""

# annotations stay objects (no `from __future__ import annotations`): typer reads this signature
# at every start, and evaluating ~300 annotation strings cost it ~8 ms

import sys
from pathlib import Path
from typing import Optional

import typer

from perfreport.cli.outputs import EXIT_BAD, EXIT_FAIL, EXIT_OK, err_line as _err
from perfreport.cli import help as H
from perfreport.errors import BadInput


def diff(
    a: str = typer.Argument(
        ..., help="Before: a trace, a workbook, a report JSON (analyze --format json, diff --json) or a --csv-dir"
    ),
    b: str = typer.Argument(..., help="After: same kinds as A"),
    output: Optional[Path] = typer.Option(None, "-o", "--output", help="Write the diff workbook (.xlsx)"),
    csv_dir: Optional[Path] = typer.Option(None, "--csv-dir", help="Also write one CSV per diff sheet into DIR"),
    json_out: Optional[Path] = typer.Option(None, "--json", help="Also write the diff as JSON"),
    sheet: Optional[str] = typer.Option(
        None, "--sheet", help="Print one sheet to stdout (diff_summary, diff_ops, diff_gpu_timeline)"
    ),
    fmt: Optional[str] = typer.Option(
        None,
        "--format",
        metavar=H.choices(H.FORMATS),
        help="Format for --sheet; json without --sheet: the whole diff on stdout [default: csv with --sheet]",
    ),
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

    from perfreport.cli.outputs import check_format

    if (bad := check_format(fmt, sheet, H.FORMATS)) is not None:
        _err(bad)
        raise typer.Exit(EXIT_BAD)
    from rich.console import Console

    from perfreport.cli.outputs import print_lines, write_outputs
    from perfreport.cli.progress import StageProgress
    from perfreport.writers.atomic import transaction

    try:
        from perfreport.cli.numbers import MAX_TOP, number
        from perfreport.report import command_line
        from perfreport.writers.plan import OutputPlan
        from perfreport.writers.targets import input_files

        number("--fail-if-slower", fail_if_slower, 0.0, unit=" (percent slower)")
        number("--top", top, 0, MAX_TOP, integer=True)
        inputs = input_files("-", others={a: "input A", b: "input B"})
        OutputPlan(inputs).file(output, "-o").file(json_out, "--json").directory(csv_dir, "--csv-dir").check()
        show = not quiet and sys.stderr.isatty()
        # one display over side A (read, tree, passes, sheets), side B, then the files written
        with StageProgress(Console(stderr=True), None, enabled=show) as prog:
            report = run_diff(
                a,
                b,
                arch_a=arch_a,
                arch_b=arch_b,
                command=command_line(),
                tune_malloc=True,
                on_side=lambda label, path: prog.begin(label, _size(path) if show else None),
                on_progress=prog.bytes,
                on_stage=prog.stage,
            )
            prog.begin("", None)
            with transaction():  # the workbook, the CSVs and the JSON: all renamed into place, or none
                wrote = write_outputs(
                    report,
                    None,
                    sheet=sheet,
                    fmt=fmt,
                    xlsx=output,
                    csv_dir=csv_dir,
                    protect=inputs,
                    on_stage=prog.stage,
                )
                if wrote is None:
                    raise typer.Exit(EXIT_BAD)
                if json_out is not None:
                    prog.stage("writing the JSON")
                    report.to_json(json_out)
                    wrote.append(f"wrote {json_out}")
    except BadInput as exc:
        _err(str(exc))
        raise typer.Exit(EXIT_BAD)
    to_stdout = sheet is not None or fmt == "json"
    if (summary if summary is not None else not to_stdout) and not quiet:
        from perfreport.writers.diff_console import print_diff_summary

        print_diff_summary(report, Console() if sys.stdout.isatty() else Console(width=180), top)
    if not quiet:
        print_lines(Console(stderr=True), wrote)  # after the summary
    if fail_if_slower is not None:
        bad = regressions(report, fail_if_slower, top)
        for line in bad:
            _err(f"slower by more than {fail_if_slower:g}%: {line}")
        if bad:
            raise typer.Exit(EXIT_FAIL)
    raise typer.Exit(EXIT_OK)


def _size(path: str):
    """Bytes of a trace file (the read's bar), None for a directory or a stream."""
    import os

    try:
        return os.path.getsize(path) if os.path.isfile(path) else None
    except OSError:
        return None
