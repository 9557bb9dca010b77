"""Command line: ``perfreport analyze``, ``perfreport archs``, ``perfreport bench-pa``.

Exit codes: 0 success; 1 internal error or a failed check; 2 bad input or arguments
(one line on stderr, no traceback); 3 report written but incomplete: the trace has no GPU
events (only CPU-side sheets have numbers), or ``--min-coverage PCT`` was given and the
modelled share of the GPU time (the coverage statement) is below PCT (with several traces:
any rank's share, or the total).
"""

from __future__ import annotations

import typer

from perfreport.cli import help as H
from perfreport.cli import analyze as _analyze_cmd, archs as _archs_cmd, diff as _diff_cmd
from perfreport.cli.analyze_options import DOC, OPTIONS, TRACES
from perfreport.cli.typer_table import typer_callback

app = typer.Typer(
    cls=H.Group,  # option values without pydantic (cli/coerce.py)
    add_completion=True,  # --install-completion / --show-completion (bash, zsh, fish, PowerShell)
    no_args_is_help=True,
    rich_markup_mode=None,
    context_settings=H.CONTEXT,
    help="Roofline reports for PyTorch profiler traces; paged-attention decode bench.",
)


@app.callback()
def _app(
    version: bool = typer.Option(
        False, "--version", callback=H.version_callback, is_eager=True, help="Print the version and exit"
    ),
):
    pass


analyze = typer_callback("analyze", TRACES, OPTIONS, _analyze_cmd.run, DOC)
app.command("analyze", epilog=H.examples("analyze"))(analyze)
app.command("diff")(_diff_cmd.diff)
app.command("archs", epilog=H.examples("archs"))(_archs_cmd.archs)


def _register_bench() -> None:
    try:
        from perfreport.cli.bench_pa import register
    except ImportError:
        return
    register(app)


_register_bench()
H.add_epilogs(app)


__all__ = ["analyze", "app"]
