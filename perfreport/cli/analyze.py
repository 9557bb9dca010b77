"""``perfreport analyze``: one trace (or several, one per rank) -> workbook, CSV, stdout, summary."""

# no typer here: the plain command lines run this without importing it (cli/main.py); the
# typer command is built from cli/analyze_options.py (cli/typer_table.py)

import sys

from perfreport.cli.analyze_options import FORMATS
from perfreport.cli.outputs import EXIT_BAD, EXIT_FAIL, EXIT_OK, EXIT_PARTIAL, LazyConsole, err_line as _err
from perfreport.errors import BadInput, InternalError


def run(
    *,
    traces,
    output,
    csv_dir,
    sheet,
    fmt,
    arch,
    basis,
    models,
    short_kernel_us,
    graph_capture,
    model_config,
    linked_only,
    quiet,
    summary,
    jobs,
    engine,
    ray_address,
    per_rank,
    keep_going,
    top,
    html,
    with_html,
    audit,
    min_coverage,
    steps,
    target_roofline,
) -> int:
    """``perfreport analyze`` with its arguments parsed (:mod:`perfreport.cli.analyze_options`):
    the exit code (see :mod:`perfreport.cli.app`)."""
    from perfreport.cli.numbers import check_analyze_numbers
    from perfreport.cli.outputs import one_trace_flags, output_plan
    from perfreport.multi.inputs import is_multi

    try:
        check_analyze_numbers(short_kernel_us=short_kernel_us, top=top, min_coverage=min_coverage, jobs=jobs)
        multi = is_multi(traces)
        if not multi:
            one_trace_flags(per_rank=per_rank, engine=engine, ray_address=ray_address, keep_going=keep_going)
    except BadInput as exc:
        _err(str(exc))
        return EXIT_BAD
    # -- several traces (multi-rank): the merged report ----------------------------------
    if multi:
        from perfreport.cli.multi import run_multi

        return run_multi(
            traces,
            output=output,
            csv_dir=csv_dir,
            sheet=sheet,
            fmt=fmt,
            quiet=quiet,
            summary=summary,
            jobs=jobs,
            engine=engine,
            ray_address=ray_address,
            per_rank=per_rank,
            keep_going=keep_going,
            arch=arch,
            basis=basis,
            models=[str(m) for m in models],
            short_kernel_us=short_kernel_us,
            graph_capture=graph_capture,
            model_config=str(model_config) if model_config else None,
            linked_only=linked_only,
            html=html,
            with_html=with_html,
            top=top,
            audit=audit,
            min_coverage=min_coverage,
            steps=steps,
            target_roofline=target_roofline / 100.0,
            tune_malloc=True,
        )
    if jobs is not None and jobs > 1:
        _err(f"warning: --jobs {jobs} has no effect with one trace")
    trace = traces[0]

    from perfreport.cli.outputs import check_format

    if (bad := check_format(fmt, sheet, FORMATS)) is not None:
        _err(bad)
        return EXIT_BAD
    to_stdout = sheet is not None or fmt == "json"  # stdout holds data: no summary, no default workbook
    if basis not in ("peak", "achievable"):
        _err(f"--basis must be peak or achievable, not {basis!r}")
        return EXIT_BAD
    # output targets (and that none is an input) are checked before any work
    from perfreport.writers.targets import default_output, input_files

    xlsx = output if output is not None else (None if to_stdout else default_output(trace))
    if with_html and xlsx is None and html is None:
        _err("--with-html needs a workbook (-o FILE, or no --sheet); use --html FILE")
        return EXIT_BAD
    html_path = html if html is not None else (xlsx.with_suffix(".html") if with_html else None)
    try:
        inputs = input_files(trace, graph_capture, arch, models, model_config)
        output_plan(inputs, xlsx, output is not None, html_path, html is not None, csv_dir).check()
    except BadInput as exc:
        _err(str(exc))
        return EXIT_BAD
    err_console = LazyConsole(stderr=True)  # rich is imported when something is printed
    out_console = LazyConsole() if sys.stdout.isatty() else LazyConsole(width=180)
    decorate = (summary if summary is not None else (not quiet and sys.stdout.isatty())) and not to_stdout
    show_progress = not quiet and sys.stderr.isatty()
    from perfreport.cli.outputs import print_lines, write_outputs
    from perfreport.cli.progress import StageProgress
    from perfreport.report import command_line

    try:
        prog = StageProgress(err_console, _size(trace) if show_progress else None, enabled=show_progress)
        with prog:
            report = _analyze(
                trace,
                prog,
                arch=arch,
                basis=basis,
                graph_capture=graph_capture,
                model_config=model_config,
                models=[str(m) for m in models],
                short_kernel_us=short_kernel_us,
                linked_only=linked_only,
                steps=steps,
                target_roofline=target_roofline / 100.0,
                timeline=html_path is not None,  # the time axis only for a page
                command=command_line(),
                tune_malloc=True,
            )
            wrote = write_outputs(
                report,
                err_console,
                sheet=sheet,
                fmt=fmt,
                xlsx=xlsx,
                html=html_path,
                csv_dir=csv_dir,
                protect=inputs,
                top=top,
                quiet=quiet,
                on_stage=prog.stage,
            )
    except BadInput as exc:
        _err(str(exc))
        return EXIT_BAD
    except InternalError as exc:  # a failed self-check (e.g. conservation): a bug
        _err(f"{trace}: internal error: {exc}")
        return EXIT_FAIL

    partial = not report.has_gpu
    if partial:
        _err(f"{report.source}: warning: trace has no GPU events; only CPU-side sheets are filled")
    if not quiet and not decorate:
        err_console.print(report.arch_msg, highlight=False)
        if report.graph_capture_summary:
            err_console.print(report.graph_capture_summary, highlight=False)
    for w in report.warnings:
        _err(f"{report.source}: warning: {w}")
    if wrote is None:
        return EXIT_BAD
    if decorate:
        from perfreport.writers.console import print_summary

        print_summary(report, out_console.rich(), top=top if top is not None else 15)
    # -- self-audit: --audit section, --min-coverage gate -------------------------
    if audit:
        from perfreport.writers.audit import print_audit

        print_audit(report, out_console.rich())
    print_lines(err_console, wrote)  # after the summary, so the paths are the last lines seen
    if min_coverage is not None and report.coverage is not None and report.coverage.modelled_pct < min_coverage:
        _err(
            f"{report.source}: modelled {report.coverage.modelled_pct:.1f}% of the "
            f"{report.coverage.basis} is below --min-coverage {min_coverage:g}%"
        )
        partial = True
    return EXIT_PARTIAL if partial else EXIT_OK


def _size(trace: str):
    from perfreport.read.source import Source

    return Source(trace).size


def _analyze(trace: str, prog, **kw):
    """The pipeline with one progress display (:class:`~perfreport.cli.progress.StageProgress`)
    over all its stages; the caller keeps it open while the outputs are written."""
    from perfreport.pipeline import analyze as run

    return run(trace, on_progress=prog.bytes, on_stage=prog.stage, **kw)
