"""Help-text conventions of the command line (kept out of ``cli/app.py``).

* ``-h`` and ``--help`` on every command, ``--version`` on the app;
* help is plain text (``rich_markup_mode=None``), so ``[default: ...]`` written in a help
  string is shown, not read as markup; typer adds ``[default: ...]`` for options with a value;
  an option whose default is None or a flag says its default in its help text;
* choices are listed in the metavar (``--format csv|json|tsv|table``);
* every command ends with an Examples block (:data:`EXAMPLES`; ``\\b`` keeps click from
  re-wrapping it);
* every option shows a metavar that says what it takes (``FILE``, ``DIR``, ``N``; never a
  Python type such as ``<list[str]>``: :data:`METAVARS`, else by type), and the options are
  grouped in panels (:data:`PANELS`, typer's ``rich_help_panel``), printed as sections by
  :class:`Command` in plain-text help.
"""

from __future__ import annotations

import inspect
import re
import sys

import typer
import typer.core

from perfreport.cli.analyze_options import BASES, FORMATS, SHEETS
from perfreport.cli.coerce import light

_SAYS_DEFAULT = re.compile(r"\[[^\]]*:[^\]]*\]\s*$")
CONTEXT = {"help_option_names": ["-h", "--help"]}
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


# option name -> metavar (options not listed get one by type: :func:`_metavar_of`)
METAVARS = {
    "output": "FILE",
    "csv_dir": "DIR",
    "per_rank": "DIR",
    "json_out": "FILE",
    "arch": "NAME|FILE",
    "arch_a": "NAME|FILE",
    "arch_b": "NAME|FILE",
    "models": "FILE",
    "model_config": "FILE",
    "graph_capture": "PATH[#REGION]",
    "short_kernel_us": "US",
    "jobs": "N",
    "engine": "serial|process|ray",
    "ray_address": "ADDRESS",
    "fail_if_slower": "PCT",
    "top": "N",
    "sheet": "NAME",
    # bench-pa: lists are comma-separated
    "context": "LEN,...",
    "batch": "N,...",
    "query_len": "N,...",
    "q_heads": "N,...",
    "kv_heads": "N,...",
    "head_dim": "N,...",
    "v_head_dim": "N,...",
    "page_size": "N,...",
    "kv_dtype": "bf16|fp8,...",
    "layout": "nhd|5d|5dv,...",
    "backend": "NAME,...",
    "baseline": "NAME",
    "partitions": "auto|N",
    "csv_path": "FILE",
    "trace": "FILE",
    "fp8_mma": "f16|fp8",
    "partials": "fp32|bf16",
}
_OUT = ["output", "csv_dir", "sheet", "fmt", "html", "with_html", "json_out", "csv_path", "trace"]
_SPEC = ["arch", "arch_a", "arch_b", "basis", "models", "model_config", "graph_capture"]
_SHAPES = ["context", "batch", "query_len", "q_heads", "kv_heads", "head_dim", "v_head_dim", "page_size"]
# option name -> help panel (section of the help); the rest stay under "Options"
PANELS = {
    **dict.fromkeys([*_OUT, "top", "summary", "quiet"], "Outputs"),
    **dict.fromkeys(["audit", "min_coverage", "fail_if_slower"], "Checks"),
    **dict.fromkeys(_SPEC, "GPU spec and models"),
    **dict.fromkeys(["short_kernel_us", "linked_only", "steps", "target_roofline"], "Analysis"),
    **dict.fromkeys(["jobs", "engine", "ray_address", "per_rank", "keep_going"], "Several traces (one per rank)"),
    **dict.fromkeys([*_SHAPES, "kv_dtype", "layout"], "Shapes"),
    **dict.fromkeys(
        ["backend", "baseline", "partitions", "graph", "reps", "seed", "fp8_mma", "partials"], "Backends and timing"
    ),
}


def _metavar_of(name: str, annotation) -> str | None:
    import typing
    from pathlib import Path

    if name in METAVARS:
        return METAVARS[name]
    args = typing.get_args(annotation)
    t = next((a for a in args if a is not type(None)), annotation) if args else annotation
    t = (typing.get_args(t) or (t,))[0] if typing.get_origin(t) in (list, typing.List) else t
    if t is bool:
        return None
    return {Path: "PATH", int: "N", float: "NUM", str: "TEXT"}.get(t)


class Group(typer.core.TyperGroup):
    """The app: its options' values coerced without pydantic (:func:`~perfreport.cli.coerce.light`;
    at parse time: typer adds the completion and help options after making the group)."""

    def parse_args(self, ctx, args):
        light(self.get_params(ctx))
        return super().parse_args(ctx, args)


class Command(typer.core.TyperCommand):
    """Plain-text help with the options in sections (their ``rich_help_panel``, in the order
    first seen) and arguments shown by their metavar alone (no ``<list[str]>``); option values
    coerced without pydantic (:func:`~perfreport.cli.coerce.light`)."""

    def parse_args(self, ctx, args):
        light(self.get_params(ctx))
        return super().parse_args(ctx, args)

    def format_options(self, ctx, formatter) -> None:
        args, panels = [], {}
        for p in self.get_params(ctx):
            rv = p.get_help_record(ctx)
            if rv is None:
                continue
            if p.param_type_name == "argument":
                name = rv[0].split(" <", 1)[0]
                args.append((name + ("..." if p.nargs != 1 and not name.endswith("...") else ""), rv[1]))
            else:
                panels.setdefault(getattr(p, "rich_help_panel", None) or "Options", []).append(rv)
        if args:
            with formatter.section("Arguments"):
                formatter.write_dl(args)
        for title in sorted(panels, key=lambda t: (t == "Options", list(panels).index(t))):
            with formatter.section(title):
                formatter.write_dl(panels[title])


def _arch_keys(incomplete: str) -> list[str]:
    """Shell completion of ``--arch``: the built-in GPU keys (a spec file: the shell's own)."""
    from perfreport.specs import list_archs

    return [s.key for s in list_archs() if s.key.startswith(incomplete.lower())]


def _choices(values):
    def complete(incomplete: str) -> list[str]:
        return [v for v in values if v.startswith(incomplete)]

    return complete


# option name -> shell completion of its value (the rest: the shell's own, e.g. file names)
COMPLETIONS = {
    **dict.fromkeys(["arch", "arch_a", "arch_b"], _arch_keys),
    "fmt": _choices(FORMATS),
    "basis": _choices(BASES),
    "engine": _choices(("serial", "process", "ray")),
}


def add_metavars_and_panels(callback) -> None:
    """A metavar (:data:`METAVARS`, else by type), a panel (:data:`PANELS`) and a shell
    completion (:data:`COMPLETIONS`) for every option of ``callback`` that has none."""
    import typing

    from typer.models import OptionInfo

    try:
        hints = typing.get_type_hints(callback)
    except Exception:  # an annotation that does not resolve: metavars by name only
        hints = {}
    for p in inspect.signature(callback).parameters.values():
        info = p.default
        if not isinstance(info, OptionInfo):
            continue
        if info.metavar is None and not (info.default is False or info.default is True):
            info.metavar = _metavar_of(p.name, hints.get(p.name))
        if info.rich_help_panel is None and p.name in PANELS:
            info.rich_help_panel = PANELS[p.name]
        if info.shell_complete is None and info.autocompletion is None and p.name in COMPLETIONS:
            info.autocompletion = COMPLETIONS[p.name]  # typer's form: called with the word typed so far


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
        if info.cls in (None, typer.core.TyperCommand):
            info.cls = Command
        if info.callback is not None:
            show_defaults(info.callback)
            add_metavars_and_panels(info.callback)


__all__ = [
    "BASES",
    "CONTEXT",
    "COMPLETIONS",
    "Command",
    "Group",
    "METAVARS",
    "PANELS",
    "add_metavars_and_panels",
    "EXAMPLES",
    "FORMATS",
    "SHEETS",
    "add_epilogs",
    "choices",
    "examples",
    "show_defaults",
    "version_callback",
]
