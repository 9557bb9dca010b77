"""The arguments of ``perfreport analyze``, declared once, without typer: the typer command is
built from this table (:func:`perfreport.cli.typer_table.typer_callback`: help, completion and
error messages stay typer's), and the plain command lines are parsed from it without importing
typer at all (:func:`perfreport.cli.fast_args.parse`; ~0.12 CPU s of every start,
docs/benchmarks.md, "Session 26: analyze without typer").

Each entry: the parameter's name, its type (as typer reads it), default, option names,
metavar (None: by type, :data:`perfreport.cli.help.METAVARS`) and help text, in the order the
help lists them.
"""

from pathlib import Path
from typing import List, NamedTuple, Optional

FORMATS = ("csv", "tsv", "json", "table")
BASES = ("peak", "achievable")
SHEETS = (
    "unified_perf_summary, gpu_timeline, ops_summary_by_category, ops_summary, ops_unique_args, "
    "kernel_summary, short_kernels, one per perf category (GEMM, SDPA_fwd, ...); "
    "a unique prefix is enough (unified)"
)


class Opt(NamedTuple):
    dest: str
    annotation: object
    default: object
    flags: tuple  # () for the positional argument
    metavar: Optional[str]
    help: str


TRACES = Opt(
    "traces",
    List[str],
    ...,
    (),
    "TRACE",
    "Kineto trace (.json or .json.gz, detected by content) or - for stdin; several traces, a directory or a glob: one rank each, merged",
)

OPTIONS = (
    Opt(
        "output",
        Optional[Path],
        None,
        ("-o", "--output"),
        None,
        "Workbook path [default: <trace stem>_perf_report.xlsx beside the trace]",
    ),
    Opt("csv_dir", Optional[Path], None, ("--csv-dir",), None, "Also write one CSV per sheet into DIR"),
    Opt(
        "sheet",
        Optional[str],
        None,
        ("--sheet",),
        "NAME",
        f"Print one sheet to stdout (no workbook unless -o is given): {SHEETS}",
    ),
    Opt(
        "fmt",
        Optional[str],
        None,
        ("--format",),
        "|".join(FORMATS),
        "Format for --sheet (tsv: tab-separated, no quoting, for cut/awk; table: aligned for reading); "
        "json without --sheet: the whole report on stdout (what `perfreport diff` reads); csv, tsv or table "
        "without --sheet is an error [default: csv with --sheet]",
    ),
    Opt(
        "arch",
        Optional[str],
        None,
        ("--arch",),
        None,
        "GPU name (see `perfreport archs`) or spec JSON file [default: from the trace's deviceProperties]",
    ),
    Opt(
        "basis",
        str,
        "peak",
        ("--basis",),
        "|".join(BASES),
        "Roofline figures: peak (datasheet) or achievable (measured, where known)",
    ),
    Opt(
        "models",
        List[Path],
        [],
        ("--models",),
        None,
        "Python file registering extra perf models (repeatable); it is executed: give only files you trust",
    ),
    Opt("short_kernel_us", float, 10.0, ("--short-kernel-us",), None, "Threshold of the short_kernels sheet (µs)"),
    Opt(
        "graph_capture",
        Optional[str],
        None,
        ("--graph-capture",),
        None,
        "Capture-time trace to attribute CUDA/HIP-graph kernels to ops: a file, a vLLM dir with execution_details.json (PATH#capture_<bs>_<mode> picks a region), or a dir of SGLang per-size files",
    ),
    Opt(
        "model_config",
        Optional[Path],
        None,
        ("--model-config",),
        None,
        "Hugging Face config.json of the traced model: sizes the trace does not record (MoE experts, sliding window, layer types)",
    ),
    Opt(
        "linked_only",
        bool,
        False,
        ("--linked-only",),
        None,
        "gpu_timeline: leave out GPU events with no CPU launch in the trace [default: off]",
    ),
    Opt("quiet", bool, False, ("--quiet", "-q"), None, "No progress bar or summary [default: off]"),
    Opt(
        "summary",
        Optional[bool],
        None,
        ("--summary/--no-summary",),
        None,
        "Print the console summary [default: only when stdout is a terminal]",
    ),
    Opt(
        "jobs",
        Optional[int],
        None,
        ("--jobs", "-j"),
        None,
        "Several traces: analyze N at a time, one process each [default: the cores available]",
    ),
    Opt(
        "engine",
        Optional[str],
        None,
        ("--engine",),
        None,
        "Several traces: serial, process or ray [default: process when --jobs > 1]",
    ),
    Opt(
        "ray_address",
        Optional[str],
        None,
        ("--ray-address",),
        None,
        "--engine ray: the cluster to use [default: start a local instance]",
    ),
    Opt(
        "per_rank",
        Optional[Path],
        None,
        ("--per-rank",),
        None,
        "Several traces: also write one workbook per rank into DIR",
    ),
    Opt(
        "keep_going",
        bool,
        False,
        ("--keep-going",),
        None,
        "Several traces: a trace that cannot be read is named and left out; the other ranks are merged (exit 3)",
    ),
    Opt(
        "top",
        Optional[int],
        None,
        ("--top",),
        "N",
        "Rows of the top-ops tables [default: 15 in the console summary, 50 in the HTML page]",
    ),
    Opt(
        "html",
        Optional[Path],
        None,
        ("--html",),
        "FILE",
        "Also write the HTML report (roofline chart, GPU timeline, sortable top rows; one offline file)",
    ),
    Opt(
        "with_html",
        bool,
        False,
        ("--with-html",),
        None,
        "Also write the HTML report beside the workbook (<workbook stem>.html) [default: off]",
    ),
    Opt(
        "audit",
        bool,
        False,
        ("--audit",),
        None,
        "Print the self-audit to stdout: coverage statement, then flagged rows by GPU time affected",
    ),
    Opt(
        "min_coverage",
        Optional[float],
        None,
        ("--min-coverage",),
        "PCT",
        "Exit 3 (report still written) when under PCT % of the GPU time is modelled; with several traces, when any rank or the total is",
    ),
    Opt(
        "steps",
        Optional[str],
        None,
        ("--steps",),
        "A:B|N,N",
        "Analyse only these steps (ProfilerStep#N numbers, else iteration annotations / graph replays numbered from 0) [default: all]",
    ),
    Opt(
        "target_roofline",
        float,
        80.0,
        ("--target-roofline",),
        "PCT",
        "fix_first sheet: the time won if each row reached PCT % of its roofline",
    ),
)

DOC = """Analyze a trace: GPU timeline, op and kernel summaries, rooflines -> Excel/CSV/stdout.
    Several traces (one per rank): a merged report with ops, GPU timeline and collectives by rank."""

__all__ = ["BASES", "DOC", "FORMATS", "OPTIONS", "Opt", "SHEETS", "TRACES"]
