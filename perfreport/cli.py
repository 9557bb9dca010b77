"""Command line: ``perfreport analyze``, ``perfreport archs``, ``perfreport bench-pa``.

Exit codes: 0 success; 1 internal error or a failed check; 2 bad input or arguments
(one line on stderr, no traceback); 3 report written but incomplete: the trace has no GPU
events (only CPU-side sheets have numbers), or ``--min-coverage PCT`` was given and the
modelled share of the GPU time (the coverage statement) is below PCT (with several traces:
any rank's share, or the total).
"""
from __future__ import annotations

import sys
from pathlib import Path
from typing import List, Optional

import typer

from perfreport import cli_help as H
from perfreport.cli_outputs import err_line
from perfreport.errors import BadInput, InternalError, Interrupted, exit_on_signals
from perfreport.writers.targets import default_output

app = typer.Typer(add_completion=False, no_args_is_help=True, rich_markup_mode=None,
                  context_settings=H.CONTEXT,
                  help="Roofline reports for PyTorch profiler traces; paged-attention decode bench.")


@app.callback()
def _app(version: bool = typer.Option(False, "--version", callback=H.version_callback, is_eager=True,
                                      help="Print the version and exit")):
    pass

EXIT_OK, EXIT_FAIL, EXIT_BAD, EXIT_PARTIAL = 0, 1, 2, 3


_err = err_line     # one "perfreport: ..." stderr line, control characters escaped


@app.command(epilog=H.examples("analyze"))
def analyze(
    traces: List[str] = typer.Argument(..., metavar="TRACE...", help="Kineto trace (.json or .json.gz, detected by content) or - for stdin; several traces, a directory or a glob: one rank each, merged"),
    output: Optional[Path] = typer.Option(None, "-o", "--output", help="Workbook path [default: <trace stem>_perf_report.xlsx beside the trace]"),
    csv_dir: Optional[Path] = typer.Option(None, "--csv-dir", help="Also write one CSV per sheet into DIR"),
    sheet: Optional[str] = typer.Option(None, "--sheet", metavar="NAME", help=f"Print one sheet to stdout (no workbook unless -o is given): {H.SHEETS}"),
    fmt: str = typer.Option("csv", "--format", metavar=H.choices(H.FORMATS), help="Format for --sheet (tsv: tab-separated, no quoting, for cut/awk; table: aligned for reading)"),
    arch: Optional[str] = typer.Option(None, "--arch", help="GPU name (see `perfreport archs`) or spec JSON file [default: from the trace's deviceProperties]"),
    basis: str = typer.Option("peak", "--basis", metavar=H.choices(H.BASES), help="Roofline figures: peak (datasheet) or achievable (measured, where known)"),
    models: List[Path] = typer.Option([], "--models", help="Python file registering extra perf models (repeatable)"),
    short_kernel_us: float = typer.Option(10.0, "--short-kernel-us", help="Threshold of the short_kernels sheet (µs)"),
    graph_capture: Optional[str] = typer.Option(None, "--graph-capture", help="Capture-time trace to attribute CUDA/HIP-graph kernels to ops: a file, a vLLM dir with execution_details.json (PATH#capture_<bs>_<mode> picks a region), or a dir of SGLang per-size files"),
    model_config: Optional[Path] = typer.Option(None, "--model-config", help="Hugging Face config.json of the traced model: sizes the trace does not record (MoE experts, sliding window, layer types)"),
    linked_only: bool = typer.Option(False, "--linked-only", help="gpu_timeline: leave out GPU events with no CPU launch in the trace [default: off]"),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress bar or summary [default: off]"),
    summary: Optional[bool] = typer.Option(None, "--summary/--no-summary", help="Print the console summary [default: only when stdout is a terminal]"),
    jobs: Optional[int] = typer.Option(None, "--jobs", "-j", help="Several traces: analyze N at a time, one process each [default: the cores available]"),
    engine: Optional[str] = typer.Option(None, "--engine", help="Several traces: serial, process or ray [default: process when --jobs > 1]"),
    ray_address: Optional[str] = typer.Option(None, "--ray-address", help="--engine ray: the cluster to use [default: start a local instance]"),
    per_rank: Optional[Path] = typer.Option(None, "--per-rank", help="Several traces: also write one workbook per rank into DIR"),
    top: Optional[int] = typer.Option(None, "--top", min=0, metavar="N", help="Rows of the top-ops tables [default: 15 in the console summary, 50 in the HTML page]"),
    html: Optional[Path] = typer.Option(None, "--html", metavar="FILE", help="Also write the HTML report (roofline chart, GPU timeline, sortable top rows; one offline file)"),
    with_html: bool = typer.Option(False, "--with-html", help="Also write the HTML report beside the workbook (<workbook stem>.html) [default: off]"),
    audit: bool = typer.Option(False, "--audit", help="Print the self-audit to stdout: coverage statement, then flagged rows by GPU time affected"),
    min_coverage: Optional[float] = typer.Option(None, "--min-coverage", metavar="PCT", help="Exit 3 (report still written) when under PCT % of the GPU time is modelled; with several traces, when any rank or the total is"),
):
    """Analyze a trace: GPU timeline, op and kernel summaries, rooflines -> Excel/CSV/stdout.
    Several traces (one per rank): a merged report with ops, GPU timeline and collectives by rank."""
    from rich.console import Console

    # -- several traces (multi-rank): the merged report ----------------------------------
    from perfreport.multi.inputs import is_multi
    if is_multi(traces):
        from perfreport.multi.cli_run import run_multi
        raise typer.Exit(run_multi(traces, output=output, csv_dir=csv_dir, sheet=sheet, fmt=fmt,
                                   quiet=quiet, summary=summary, jobs=jobs, engine=engine,
                                   ray_address=ray_address, per_rank=per_rank, arch=arch,
                                   basis=basis, models=[str(m) for m in models],
                                   short_kernel_us=short_kernel_us, graph_capture=graph_capture,
                                   model_config=str(model_config) if model_config else None,
                                   linked_only=linked_only, html=html, with_html=with_html,
                                   top=top, audit=audit, min_coverage=min_coverage))
    trace = traces[0]

    if fmt not in H.FORMATS:
        _err(f"--format must be one of {', '.join(H.FORMATS)}, not {fmt!r}")
        raise typer.Exit(EXIT_BAD)
    if basis not in ("peak", "achievable"):
        _err(f"--basis must be peak or achievable, not {basis!r}")
        raise typer.Exit(EXIT_BAD)
    # output targets (and that none is an input) are checked before any work: issue 10
    xlsx = output if output is not None else (None if sheet is not None else default_output(trace))
    if with_html and xlsx is None and html is None:
        _err("--with-html needs a workbook (-o FILE, or no --sheet); use --html FILE")
        raise typer.Exit(EXIT_BAD)
    html_path = html if html is not None else (xlsx.with_suffix(".html") if with_html else None)
    try:
        from perfreport.writers.targets import check_outputs, input_files
        inputs = input_files(trace, graph_capture, arch, models, model_config)
        check_outputs([xlsx, html_path], csv_dir, inputs)
    except BadInput as exc:
        _err(str(exc))
        raise typer.Exit(EXIT_BAD)
    err_console = Console(stderr=True)
    out_console = Console() if sys.stdout.isatty() else Console(width=180)
    decorate = (summary if summary is not None else (not quiet and sys.stdout.isatty())) and sheet is None
    show_progress = not quiet and sys.stderr.isatty()
    try:
        report = _analyze(trace, show_progress, err_console, arch=arch, basis=basis,
                          graph_capture=graph_capture, model_config=model_config,
                          models=[str(m) for m in models], short_kernel_us=short_kernel_us,
                          linked_only=linked_only)
    except BadInput as exc:
        _err(str(exc))
        raise typer.Exit(EXIT_BAD)
    except InternalError as exc:         # a failed self-check (e.g. conservation): a bug
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

    from perfreport.cli_outputs import write_outputs

    if not write_outputs(report, err_console, sheet=sheet, fmt=fmt, xlsx=xlsx, html=html_path,
                         csv_dir=csv_dir, protect=inputs, top=top, quiet=quiet):
        raise typer.Exit(EXIT_BAD)
    if decorate:
        from perfreport.writers.console import print_summary
        print_summary(report, out_console, top=top if top is not None else 15)
    # -- self-audit (issue 9): --audit section, --min-coverage gate -------------------------
    if audit:
        from perfreport.writers.audit import print_audit
        print_audit(report, out_console)
    if min_coverage is not None and report.coverage is not None \
            and report.coverage.modelled_pct < min_coverage:
        _err(f"{report.source}: modelled {report.coverage.modelled_pct:.1f}% of the "
             f"{report.coverage.basis} is below --min-coverage {min_coverage:g}%")
        partial = True
    raise typer.Exit(EXIT_PARTIAL if partial else EXIT_OK)


def _analyze(trace: str, show_progress: bool, console, **kw):
    from perfreport.pipeline import analyze as run
    if not show_progress:
        return run(trace, **kw)
    from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn
    from perfreport.read.source import Source
    size = Source(trace).size
    with Progress(TextColumn("reading"), BarColumn(), DownloadColumn(), TimeRemainingColumn(),
                  console=console, transient=True) as prog:
        task = prog.add_task("read", total=size)
        return run(trace, on_progress=lambda n: prog.update(task, completed=n), **kw)


@app.command()
def diff(
    a: str = typer.Argument(..., help="Before: a trace, a report JSON (--json / --format json) or a --csv-dir"),
    b: str = typer.Argument(..., help="After: same kinds as A"),
    output: Optional[Path] = typer.Option(None, "-o", "--output", help="Write the diff workbook (.xlsx)"),
    csv_dir: Optional[Path] = typer.Option(None, "--csv-dir", help="Also write one CSV per diff sheet into DIR"),
    json_out: Optional[Path] = typer.Option(None, "--json", help="Also write the diff as JSON"),
    sheet: Optional[str] = typer.Option(None, "--sheet", help="Print one sheet to stdout (diff_summary, diff_ops, diff_gpu_timeline)"),
    fmt: str = typer.Option("csv", "--format", help="Format for --sheet: csv, json or table"),
    arch_a: Optional[str] = typer.Option(None, "--arch-a", help="GPU spec for trace A [default: detected]"),
    arch_b: Optional[str] = typer.Option(None, "--arch-b", help="GPU spec for trace B [default: detected]"),
    fail_if_slower: Optional[float] = typer.Option(None, "--fail-if-slower", help="Exit 1 if the total or any of the top N rows is more than PCT percent slower in B"),
    top: int = typer.Option(10, "--top", help="Rows checked by --fail-if-slower and shown in the summary"),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No summary"),
    summary: Optional[bool] = typer.Option(None, "--summary/--no-summary", help="Print the console summary [default: unless --sheet]"),
):
    """Compare two traces (or reports): matched ops, time A/B, delta, speedup, GPU timelines."""
    from perfreport.diff import diff as run_diff, regressions
    if fmt not in ("csv", "json", "table"):
        _err(f"--format must be csv, json or table, not {fmt!r}")
        raise typer.Exit(EXIT_BAD)
    try:
        from perfreport.writers.targets import check_outputs, input_files
        inputs = input_files("-", others={a: "input A", b: "input B"})
        check_outputs([output, json_out], csv_dir, inputs)
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
    if output is not None:
        for w in report.to_excel(output):
            _err(f"warning: {w}")
    if csv_dir is not None:
        report.to_csv_dir(csv_dir, protect=inputs)
    if json_out is not None:
        report.to_json(json_out)
    if (summary if summary is not None else sheet is None) and not quiet:
        from perfreport.writers.console import print_diff_summary
        from rich.console import Console
        print_diff_summary(report, Console() if sys.stdout.isatty() else Console(width=180), top)
    if fail_if_slower is not None:
        bad = regressions(report, fail_if_slower, top)
        for line in bad:
            _err(f"slower by more than {fail_if_slower:g}%: {line}")
        if bad:
            raise typer.Exit(EXIT_FAIL)
    raise typer.Exit(EXIT_OK)


@app.command(epilog=H.examples("archs"))
def archs(json_out: bool = typer.Option(False, "--json", help="JSON on stdout [default: a table]")):
    """List the GPUs with built-in specs (memory bandwidth, dense peaks)."""
    from perfreport.specs import list_archs
    specs = list_archs()
    if json_out:
        import orjson
        sys.stdout.write(orjson.dumps([{"key": s.key, "name": s.name, "mem_bw_tbps": s.mem_bw_tbps,
                                        "peaks_tflops": s.peaks} for s in specs],
                                      option=orjson.OPT_INDENT_2).decode() + "\n")
        return
    from rich.console import Console
    from perfreport.writers.console import archs_table
    Console(width=None if sys.stdout.isatty() else 120).print(archs_table(specs))


def _register_bench() -> None:
    try:
        from perfreport.bench.pa_command import register
    except ImportError:
        return
    register(app)


_register_bench()
H.add_epilogs(app)


def main() -> None:
    exit_on_signals()
    try:
        app()
    except BadInput as exc:
        _err(str(exc))
        sys.exit(EXIT_BAD)
    except Interrupted as exc:
        _err(f"interrupted ({exc.name}); no partial output was left")
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:
        _err("interrupted")
        sys.exit(130)
    except BrokenPipeError:
        sys.exit(0)


if __name__ == "__main__":
    main()
