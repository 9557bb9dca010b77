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
    html=None,
    with_html=False,
    top=None,
    audit=False,
    min_coverage=None,
    **analyze_kw,
) -> int:
    """Returns the exit code (0; 2 bad input; 3 no GPU events in any trace, or ``min_coverage``
    given and a rank or all ranks together model less than that % of their GPU time)."""
    from rich.console import Console

    from perfreport.multi import analyze_ranks
    from perfreport.multi.inputs import default_merged_output
    from perfreport.cli.outputs import err_line, write_outputs

    from perfreport.multi.inputs import expand_inputs
    from perfreport.writers.targets import check_outputs, input_files

    err = Console(stderr=True)
    xlsx = output if output is not None else (None if sheet is not None else default_merged_output(traces))
    html_path = html if html is not None else (xlsx.with_suffix(".html") if with_html and xlsx else None)
    try:
        if with_html and xlsx is None and html is None:
            raise BadInput("--with-html", "needs a workbook (-o FILE, or no --sheet); use --html FILE")
        if jobs is not None and jobs < 1:
            raise BadInput("--jobs", f"must be at least 1, not {jobs}")
        if fmt not in ("csv", "json", "table"):
            raise BadInput("--format", f"must be csv, json or table, not {fmt!r}")
        paths = expand_inputs(list(traces))
        inputs = input_files(
            "-",
            analyze_kw.get("graph_capture"),
            analyze_kw.get("arch"),
            analyze_kw.get("models") or (),
            analyze_kw.get("model_config"),
            others={p: "an input trace" for p in paths},
        )
        check_outputs([xlsx, html_path], csv_dir, inputs)
        if per_rank is not None:
            check_outputs([], per_rank, inputs)  # a directory we may create
        report = analyze_ranks(
            paths, jobs=jobs, engine=engine, ray_address=ray_address, per_rank_dir=per_rank, **analyze_kw
        )
    except BadInput as exc:
        err_line(str(exc))
        return EXIT_BAD
    for n in report.notes:
        if ": warning: " in n:
            err_line(n)
    if not write_outputs(
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
    ):
        return EXIT_BAD
    if per_rank is not None and not quiet:
        err.print(f"wrote the per-rank reports to {per_rank}", highlight=False, soft_wrap=True)
    show = summary if summary is not None else (not quiet and sys.stdout.isatty())
    if show and sheet is None:
        from perfreport.writers.console import print_summary_multi

        print_summary_multi(
            report, Console() if sys.stdout.isatty() else Console(width=180), top=top if top is not None else 15
        )
    if audit:
        from perfreport.writers.audit import print_audit

        print_audit(report, Console() if sys.stdout.isatty() else Console(width=180))
    partial = not report.has_gpu
    if min_coverage is not None and report.coverage is not None:
        for rank, pct, basis in report.coverage.below(min_coverage):
            who = "all ranks" if rank is None else f"rank {rank} ({report.rank_paths.get(rank, '?')})"
            err_line(f"{who}: modelled {pct:.1f}% of the {basis} is below --min-coverage {min_coverage:g}%")
            partial = True
    return EXIT_PARTIAL if partial else EXIT_OK


__all__ = ["run_multi"]
