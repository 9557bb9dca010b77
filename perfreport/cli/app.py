"""Command line: ``perfreport analyze``, ``perfreport archs``, ``perfreport bench-pa``.

Exit codes: 0 success; 1 internal error or a failed check; 2 bad input or arguments
(one line on stderr, no traceback); 3 report written but incomplete: the trace has no GPU
events (only CPU-side sheets have numbers), or ``--min-coverage PCT`` was given and the
modelled share of the GPU time (the coverage statement) is below PCT (with several traces:
any rank's share, or the total).
"""

from __future__ import annotations

import os
import sys

import typer

from perfreport.cli import help as H
from perfreport.cli import analyze as _analyze_cmd, archs as _archs_cmd, diff as _diff_cmd
from perfreport.cli.outputs import EXIT_BAD, err_line as _err
from perfreport.errors import BadInput, Interrupted, exit_on_signals

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


app.command("analyze", epilog=H.examples("analyze"))(_analyze_cmd.analyze)
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


# OpenBLAS (numpy's BLAS) starts one thread per core when numpy is imported, and they spin a
# while: ~0.1 of the ~0.28 CPU s numpy's import costs here (2 cores; more with more cores).
# analyze, diff and archs do no linear algebra, so the command line asks for one thread unless
# the user set a count; bench-pa (torch, its own BLAS) is left as it is. Measured in
# docs/benchmarks.md, "Session 26: one BLAS thread".
def one_blas_thread(argv: list[str], environ=os.environ) -> None:
    """Ask numpy's BLAS for one thread (before numpy is imported) unless ``argv`` runs bench-pa
    or the environment already says how many."""
    if argv[1:2] != ["bench-pa"]:
        environ.setdefault("OPENBLAS_NUM_THREADS", "1")


def main() -> None:
    one_blas_thread(sys.argv)
    exit_on_signals()
    try:
        app()
    except BadInput as exc:
        _err(str(exc))
        sys.exit(EXIT_BAD)
    except Interrupted as exc:
        sys.unraisablehook = _quiet  # a half-written archive complains when freed: not news
        _err(f"interrupted ({exc.name}); no partial output was left")
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:
        sys.unraisablehook = _quiet
        _err("interrupted")
        sys.exit(130)
    except BrokenPipeError:
        sys.exit(0)


def _quiet(unraisable) -> None:
    return None


if __name__ == "__main__":
    main()
