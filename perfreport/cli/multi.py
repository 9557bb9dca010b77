"""``perfreport analyze`` with several traces: run, write, print (the CLI's multi-rank block)."""

from __future__ import annotations

import sys
from perfreport.cli.outputs import EXIT_BAD, EXIT_OK, EXIT_PARTIAL
from perfreport.errors import BadInput


def run_multi(
    traces,
    *,
    output,
    csv_dir,
    sheet,
    fmt,
    quiet,
    summary,
    jobs,
    engine,
    ray_address,
    per_rank,
    keep_going=False,
    html=None,
    with_html=False,
    top=None,
    audit=False,
    min_coverage=None,
    **analyze_kw,
) -> int:
    """Returns the exit code (0; 2 bad input; 3 no GPU events in any trace, or ``min_coverage``
    given and a rank or all ranks together model less than that % of their GPU time, or
    ``keep_going`` left a trace out). Every output (merged workbook, page, CSVs, per-rank
    workbooks) is written in one transaction: all of them, or none."""
    from rich.console import Console

    from perfreport.cli.help import FORMATS
    from perfreport.cli.outputs import check_format, err_line, output_plan, print_lines, write_outputs
    from perfreport.multi import analyze_ranks
    from perfreport.multi.checks import repeated_inputs
    from perfreport.multi.inputs import default_merged_output, expand_inputs, named_traces
    from perfreport.multi.worker import per_rank_name
    from perfreport.report import command_line
    from perfreport.writers.atomic import transaction
    from perfreport.writers.targets import input_files

    err = Console(stderr=True)
    to_stdout = sheet is not None or fmt == "json"  # stdout holds data: no summary, no default workbook
    xlsx = output if output is not None else (None if to_stdout else default_merged_output(traces))
    html_path = html if html is not None else (xlsx.with_suffix(".html") if with_html and xlsx else None)
    try:
        if with_html and xlsx is None and html is None:
            raise BadInput("--with-html", "needs a workbook (-o FILE, or no --sheet); use --html FILE")
        if (bad := check_format(fmt, sheet, FORMATS)) is not None:
            raise BadInput("--format", bad.removeprefix("--format "))
        named = named_traces(list(traces))
        paths = expand_inputs(list(traces))
        inputs = input_files(
            "-",
            analyze_kw.get("graph_capture"),
            analyze_kw.get("arch"),
            analyze_kw.get("models") or (),
            analyze_kw.get("model_config"),
            others={p: "an input trace" for p in paths},
        )
        plan = output_plan(inputs, xlsx, output is not None, html_path, html is not None, csv_dir)
        if per_rank is not None:
            plan.directory(per_rank, "--per-rank", suffix="\0")  # its files are listed one by one
            for p in paths:
                plan.file(per_rank / per_rank_name(p), f"the --per-rank workbook of {p}", in_dir=True)
        plan.check()
    except BadInput as exc:
        err_line(str(exc))
        return EXIT_BAD
    for w in repeated_inputs(named):
        err_line(w)
    try:
        with transaction():
            report = analyze_ranks(
                paths,
                jobs=jobs,
                engine=engine,
                ray_address=ray_address,
                per_rank_dir=per_rank,
                keep_going=keep_going,
                quiet=quiet,
                command=command_line(),
                **analyze_kw,
            )
            for n in report.notes:
                if ": warning: " in n:
                    err_line(n)
            for x in report.left_out:
                err_line(f"left out: {x}")
            wrote = write_outputs(
                report,
                err,
                sheet=sheet,
                fmt=fmt,
                xlsx=xlsx,
                html=html_path,
                csv_dir=csv_dir,
                protect=inputs,
                top=top,
                quiet=quiet,
            )
            if wrote is None:
                raise _NoSheet()
    except BadInput as exc:
        err_line(str(exc))
        return EXIT_BAD
    except _NoSheet:
        return EXIT_BAD
    if per_rank is not None and not quiet:
        wrote.append(f"wrote the per-rank reports to {per_rank}")
    show = summary if summary is not None else (not quiet and sys.stdout.isatty())
    if show and not to_stdout:
        from perfreport.writers.console_multi import print_summary_multi

        print_summary_multi(
            report, Console() if sys.stdout.isatty() else Console(width=180), top=top if top is not None else 15
        )
    if audit:
        from perfreport.writers.audit import print_audit

        print_audit(report, Console() if sys.stdout.isatty() else Console(width=180))
    print_lines(err, wrote)  # after the summary, so the paths are the last lines seen
    partial = not report.has_gpu or bool(report.left_out)
    if min_coverage is not None and report.coverage is not None:
        for rank, pct, basis in report.coverage.below(min_coverage):
            who = "all ranks" if rank is None else f"rank {rank} ({report.rank_paths.get(rank, '?')})"
            err_line(f"{who}: modelled {pct:.1f}% of the {basis} is below --min-coverage {min_coverage:g}%")
            partial = True
    return EXIT_PARTIAL if partial else EXIT_OK


class _NoSheet(Exception):
    """``--sheet`` named no sheet (its line is printed): the run's files are not kept."""


__all__ = ["run_multi"]
