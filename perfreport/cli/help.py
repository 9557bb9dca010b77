"""Help-text conventions of the command line (kept out of ``cli/app.py``).

* ``-h`` and ``--help`` on every command, ``--version`` on the app;
* help is plain text (``rich_markup_mode=None``), so ``[default: ...]`` written in a help
  string is shown, not read as markup; typer adds ``[default: ...]`` for options with a value;
  an option whose default is None or a flag says its default in its help text;
* choices are listed in the metavar (``--format csv|json|tsv|table``);
* every command ends with an Examples block (:data:`EXAMPLES`; ``\\b`` keeps click from
  re-wrapping it).
"""

from __future__ import annotations

import inspect
import re
import sys

import typer

_SAYS_DEFAULT = re.compile(r"\[[^\]]*:[^\]]*\]\s*$")
CONTEXT = {"help_option_names": ["-h", "--help"]}
FORMATS = ("csv", "tsv", "json", "table")
BASES = ("peak", "achievable")
SHEETS = (
    "unified_perf_summary, gpu_timeline, ops_summary_by_category, ops_summary, ops_unique_args, "
    "kernel_summary, short_kernels, one per perf category (GEMM, SDPA_fwd, ...); "
    "a unique prefix is enough (unified)"
)

EXAMPLES = {
    "analyze": [
        "perfreport analyze trace.json.gz                 # workbook beside the trace",
        "perfreport analyze trace.json.gz --html report.html --top 25",
        "perfreport analyze trace.json.gz -o out.xlsx --with-html   # out.xlsx + out.html",
        "perfreport analyze trace.json.gz --sheet unified --format table",
        "perfreport analyze trace.json.gz --sheet unified --format tsv | cut -f1,3,5",
        "zcat trace.json.gz | perfreport analyze - --sheet gpu_timeline --format json",
        "perfreport analyze trace.json.gz --arch mi300x --basis achievable",
    ],
    "archs": [
        "perfreport archs",
        "perfreport archs --json",
    ],
    "diff": [
        "perfreport diff before.json.gz after.json.gz",
        "perfreport diff before.json.gz after.json.gz -o diff.xlsx --fail-if-slower 5",
        "perfreport diff a_report.json b_csv_dir/ --sheet diff_ops --format table",
    ],
    "bench-pa": [
        "perfreport bench-pa --context 64k",
        "perfreport bench-pa --context 16k,64k --kv-dtype bf16,fp8 --csv pa.csv",
        "perfreport bench-pa --context 2k --batch 2 --trace pa.json && perfreport analyze pa.json",
    ],
}


def examples(command: str) -> str:
    """The epilog of ``command``: an Examples block click prints as written."""
    return "\b\nExamples:\n" + "\n".join(f"  {line}" for line in EXAMPLES[command])


def choices(values) -> str:
    return "|".join(values)


def version_callback(value: bool) -> None:
    if value:
        from perfreport import __version__

        sys.stdout.write(f"perfreport {__version__}\n")
        raise typer.Exit(0)


def show_defaults(callback) -> None:
    """Say the default in the help of each option of ``callback`` that typer shows none for: a
    flag that is off (``[default: off]``) or an option whose default is None (``[default:
    none]``). An option whose help already ends in a bracketed ``[default: ...]`` (or
    ``[GPU: ...; CPU: ...]``) is left alone."""
    from typer.models import OptionInfo

    for p in inspect.signature(callback).parameters.values():
        info = p.default
        if not isinstance(info, OptionInfo) or _SAYS_DEFAULT.search(info.help or ""):
            continue
        decls = " ".join(info.param_decls or ())
        if info.default is False and "/" not in decls:
            info.help = f"{info.help or ''} [default: off]".strip()
        elif info.default is None or info.default == []:
            info.help = f"{info.help or ''} [default: none]".strip()


def add_epilogs(app: typer.Typer) -> None:
    """Give every registered command (those other modules register, e.g. ``bench-pa``,
    included) its Examples block, ``-h``, and a visible default on every option."""
    for info in app.registered_commands:
        name = info.name or (info.callback.__name__.replace("_", "-") if info.callback else None)
        if info.epilog is None and name in EXAMPLES:
            info.epilog = examples(name)
        if info.context_settings is None:
            info.context_settings = dict(CONTEXT)
        if info.callback is not None:
            show_defaults(info.callback)


__all__ = [
    "BASES",
    "CONTEXT",
    "EXAMPLES",
    "FORMATS",
    "SHEETS",
    "add_epilogs",
    "choices",
    "examples",
    "show_defaults",
    "version_callback",
]
