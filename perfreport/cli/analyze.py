"""``perfreport analyze``: one trace (or several, one per rank) -> workbook, CSV, stdout, summary."""

# annotations stay objects (no `from __future__ import annotations`): typer reads this signature
# at every start, and evaluating ~300 annotation strings cost it ~8 ms

import sys
from pathlib import Path
from typing import List, Optional

import typer

from perfreport.cli import help as H
from perfreport.cli.outputs import EXIT_BAD, EXIT_FAIL, EXIT_OK, EXIT_PARTIAL, LazyConsole, err_line as _err
from perfreport.errors import BadInput, InternalError


def analyze(
    traces: List[str] = typer.Argument(
        ...,
        metavar="TRACE",
        help="Kineto trace (.json or .json.gz, detected by content) or - for stdin; several traces, a directory or a glob: one rank each, merged",
    ),
    output: Optional[Path] = typer.Option(
        None, "-o", "--output", help="Workbook path [default: <trace stem>_perf_report.xlsx beside the trace]"
    ),
    csv_dir: Optional[Path] = typer.Option(None, "--csv-dir", help="Also write one CSV per sheet into DIR"),
    sheet: Optional[str] = typer.Option(
        None, "--sheet", metavar="NAME", help=f"Print one sheet to stdout (no workbook unless -o is given): {H.SHEETS}"
    ),
    fmt: Optional[str] = typer.Option(
        None,
        "--format",
        metavar=H.choices(H.FORMATS),
        help="Format for --sheet (tsv: tab-separated, no quoting, for cut/awk; table: aligned for reading); "
        "json without --sheet: the whole report on stdout (what `perfreport diff` reads); csv, tsv or table "
        "without --sheet is an error [default: csv with --sheet]",
    ),
    arch: Optional[str] = typer.Option(
        None,
        "--arch",
        help="GPU name (see `perfreport archs`) or spec JSON file [default: from the trace's deviceProperties]",
    ),
    basis: str = typer.Option(
        "peak",
        "--basis",
        metavar=H.choices(H.BASES),
        help="Roofline figures: peak (datasheet) or achievable (measured, where known)",
    ),
    models: List[Path] = typer.Option(
        [],
        "--models",
        help="Python file registering extra perf models (repeatable); it is executed: give only files you trust",
    ),
    short_kernel_us: float = typer.Option(10.0, "--short-kernel-us", help="Threshold of the short_kernels sheet (µs)"),
    graph_capture: Optional[str] = typer.Option(
        None,
        "--graph-capture",
        help="Capture-time trace to attribute CUDA/HIP-graph kernels to ops: a file, a vLLM dir with execution_details.json (PATH#capture_<bs>_<mode> picks a region), or a dir of SGLang per-size files",
    ),
    model_config: Optional[Path] = typer.Option(
        None,
        "--model-config",
        help="Hugging Face config.json of the traced model: sizes the trace does not record (MoE experts, sliding window, layer types)",
    ),
    linked_only: bool = typer.Option(
        False, "--linked-only", help="gpu_timeline: leave out GPU events with no CPU launch in the trace [default: off]"
    ),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress bar or summary [default: off]"),
    summary: Optional[bool] = typer.Option(
        None, "--summary/--no-summary", help="Print the console summary [default: only when stdout is a terminal]"
    ),
    jobs: Optional[int] = typer.Option(
        None,
        "--jobs",
        "-j",
        help="Several traces: analyze N at a time, one process each [default: the cores available]",
    ),
    engine: Optional[str] = typer.Option(
        None, "--engine", help="Several traces: serial, process or ray [default: process when --jobs > 1]"
    ),
    ray_address: Optional[str] = typer.Option(
        None, "--ray-address", help="--engine ray: the cluster to use [default: start a local instance]"
    ),
    per_rank: Optional[Path] = typer.Option(
        None, "--per-rank", help="Several traces: also write one workbook per rank into DIR"
    ),
    keep_going: bool = typer.Option(
        False,
        "--keep-going",
        help="Several traces: a trace that cannot be read is named and left out; the other ranks are merged (exit 3)",
    ),
    top: Optional[int] = typer.Option(
        None,
        "--top",
        metavar="N",
        help="Rows of the top-ops tables [default: 15 in the console summary, 50 in the HTML page]",
    ),
    html: Optional[Path] = typer.Option(
        None,
        "--html",
        metavar="FILE",
        help="Also write the HTML report (roofline chart, GPU timeline, sortable top rows; one offline file)",
    ),
    with_html: bool = typer.Option(
        False,
        "--with-html",
        help="Also write the HTML report beside the workbook (<workbook stem>.html) [default: off]",
    ),
    audit: bool = typer.Option(
        False,
        "--audit",
        help="Print the self-audit to stdout: coverage statement, then flagged rows by GPU time affected",
    ),
    min_coverage: Optional[float] = typer.Option(
        None,
        "--min-coverage",
        metavar="PCT",
        help="Exit 3 (report still written) when under PCT % of the GPU time is modelled; with several traces, when any rank or the total is",
    ),
    steps: Optional[str] = typer.Option(
        None,
        "--steps",
        metavar="A:B|N,N",
        help="Analyse only these steps (ProfilerStep#N numbers, else iteration annotations / graph replays numbered from 0) [default: all]",
    ),
    target_roofline: float = typer.Option(
        80.0,
        "--target-roofline",
        metavar="PCT",
        help="fix_first sheet: the time won if each row reached PCT % of its roofline",
    ),
):
    """Analyze a trace: GPU timeline, op and kernel summaries, rooflines -> Excel/CSV/stdout.
    Several traces (one per rank): a merged report with ops, GPU timeline and collectives by rank."""
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
        raise typer.Exit(EXIT_BAD)
    # -- several traces (multi-rank): the merged report ----------------------------------
    if multi:
        from perfreport.cli.multi import run_multi

        raise typer.Exit(
            run_multi(
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
        )
    if jobs is not None and jobs > 1:
        _err(f"warning: --jobs {jobs} has no effect with one trace")
    trace = traces[0]

    from perfreport.cli.outputs import check_format

    if (bad := check_format(fmt, sheet, H.FORMATS)) is not None:
        _err(bad)
        raise typer.Exit(EXIT_BAD)
    to_stdout = sheet is not None or fmt == "json"  # stdout holds data: no summary, no default workbook
    if basis not in ("peak", "achievable"):
        _err(f"--basis must be peak or achievable, not {basis!r}")
        raise typer.Exit(EXIT_BAD)
    # output targets (and that none is an input) are checked before any work
    from perfreport.writers.targets import default_output, input_files

    xlsx = output if output is not None else (None if to_stdout else default_output(trace))
    if with_html and xlsx is None and html is None:
        _err("--with-html needs a workbook (-o FILE, or no --sheet); use --html FILE")
        raise typer.Exit(EXIT_BAD)
    html_path = html if html is not None else (xlsx.with_suffix(".html") if with_html else None)
    try:
        inputs = input_files(trace, graph_capture, arch, models, model_config)
        output_plan(inputs, xlsx, output is not None, html_path, html is not None, csv_dir).check()
    except BadInput as exc:
        _err(str(exc))
        raise typer.Exit(EXIT_BAD)
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
        raise typer.Exit(EXIT_BAD)
    except InternalError as exc:  # a failed self-check (e.g. conservation): a bug
        _err(f"{trace}: internal error: {exc}")
        raise typer.Exit(EXIT_FAIL)

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
        raise typer.Exit(EXIT_BAD)
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
    raise typer.Exit(EXIT_PARTIAL if partial else EXIT_OK)


def _size(trace: str):
    from perfreport.read.source import Source

    return Source(trace).size


def _analyze(trace: str, prog, **kw):
    """The pipeline with one progress display (:class:`~perfreport.cli.progress.StageProgress`)
    over all its stages; the caller keeps it open while the outputs are written."""
    from perfreport.pipeline import analyze as run

    return run(trace, on_progress=prog.bytes, on_stage=prog.stage, **kw)
