"""The command line's entry point (``perfreport``, ``python -m perfreport``).

A plain ``perfreport analyze ...`` line (:mod:`perfreport.cli.fast_args`) runs without importing
typer; every other line (help, completion, the other commands, anything typer must word the
error of) goes to the typer app (:mod:`perfreport.cli.app`). Both end the same way: the exit
code the command returns, and one line on stderr for bad input or an interruption.
"""

import os
import sys

from perfreport.cli.outputs import EXIT_BAD, err_line as _err
from perfreport.errors import BadInput, Interrupted, exit_on_signals

COMPLETE_VAR = "_PERFREPORT_COMPLETE"  # set by the shell completion typer installs


def one_blas_thread(argv: list[str], environ=os.environ) -> None:
    """Ask numpy's BLAS for one thread (before numpy is imported) unless ``argv`` runs bench-pa
    or the environment already says how many.

    OpenBLAS (numpy's BLAS) starts one thread per core when numpy is imported, and they spin a
    while: ~0.1 of the ~0.28 CPU s numpy's import costs here (2 cores; more with more cores).
    analyze, diff and archs do no linear algebra; bench-pa (torch, its own BLAS) is left as it
    is. Measured in docs/benchmarks.md, "Session 26: one BLAS thread"."""
    if argv[1:2] != ["bench-pa"]:
        environ.setdefault("OPENBLAS_NUM_THREADS", "1")


def main(argv: list[str] | None = None, typer_app=None) -> None:
    """Run the command line ``argv`` (default ``sys.argv``); ``typer_app``: the app to hand the
    other lines to (default: :data:`perfreport.cli.app.app`, imported then)."""
    argv = sys.argv if argv is None else argv
    one_blas_thread(argv)
    exit_on_signals()
    try:
        code = _plain(argv)
        if code is None:
            if typer_app is None:
                from perfreport.cli.app import app as typer_app
            typer_app(args=argv[1:])
        else:
            sys.exit(code)
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


def _plain(argv: list[str]) -> int | None:
    """The exit code of a plain ``analyze`` line run without typer, or None (typer's line).
    Ends as typer ends a command: stdout closed by a reader (EPIPE) is exit 1 with nothing more
    written; an EOF on input is "Aborted!", exit 1."""
    if argv[1:2] != ["analyze"] or COMPLETE_VAR in os.environ:
        return None
    from perfreport.cli.analyze_options import OPTIONS, TRACES
    from perfreport.cli.fast_args import parse

    values = parse(argv[2:], TRACES, OPTIONS)
    if values is None:
        return None
    from perfreport.cli.analyze import run

    try:
        return run(**values)
    except EOFError:
        sys.stderr.write("\nAborted!\n")
        return 1
    except OSError as exc:
        import errno

        if exc.errno != errno.EPIPE:
            raise
        from perfreport.writers.text import quiet_stdout

        quiet_stdout()
        return 1


def _quiet(unraisable) -> None:
    return None


__all__ = ["main", "one_blas_thread"]
