"""cli/main.py: the entry point. Exit codes: bad input 2 with one line, an interrupt 130 (or
the signal's code) saying no partial output was left, a closed pipe 0; a plain analyze line runs
without typer, the rest through it; one BLAS thread asked for before numpy is imported."""

from __future__ import annotations

import pytest

import perfreport.cli.main as M
from perfreport.errors import BadInput, Interrupted


@pytest.mark.parametrize(
    ("exc", "code", "line"),
    [
        (BadInput("t.json", "file is empty"), 2, "t.json: file is empty"),
        (KeyboardInterrupt(), 130, "interrupted"),
        (BrokenPipeError(), 0, None),
    ],
)
def test_main_maps_errors_to_exit_codes(monkeypatch, capsys, exc, code, line):
    def boom():
        raise exc

    monkeypatch.setattr(M, "exit_on_signals", lambda: None)
    with pytest.raises(SystemExit) as e:
        M.main(["perfreport", "archs"], typer_app=lambda args: boom())
    assert e.value.code == code
    err = capsys.readouterr().err
    if line is None:
        assert err == ""
    else:
        assert err.strip().endswith(line) and len(err.strip().splitlines()) == 1


def test_main_on_a_signal_says_no_partial_output_was_left(monkeypatch, capsys):
    import signal

    def boom():
        raise Interrupted(signal.SIGTERM)

    monkeypatch.setattr(M, "exit_on_signals", lambda: None)
    with pytest.raises(SystemExit) as e:
        M.main(["perfreport", "archs"], typer_app=lambda args: boom())
    assert e.value.code == 128 + signal.SIGTERM
    assert "interrupted (SIGTERM); no partial output was left" in capsys.readouterr().err


# a fresh interpreter: the exit code, then whether typer was imported
_TYPER_AFTER = """
import sys
from perfreport.cli.main import main
try:
    main(["perfreport", *sys.argv[1:]])
except SystemExit as e:
    print("exit", e.code)
print("typer" in sys.modules, "perfreport.cli.app" in sys.modules)
"""


@pytest.mark.parametrize(
    ("args", "typer"),
    [
        (["analyze", "T", "-o", "r.xlsx", "-q"], False),
        (["analyze", "T", "--sheet", "unified", "--format", "tsv", "--top", "3", "--no-summary"], False),
        (["analyze", "T", "-o=r.xlsx", "-q"], True),  # not plain: typer parses it
        (["analyze", "T", "-q", "-q"], True),  # given twice
        (["analyze", "--help"], True),
        (["archs", "--json"], True),
    ],
)
def test_a_plain_analyze_line_runs_without_typer(tmp_path, args, typer):
    import os
    import subprocess
    import sys
    from pathlib import Path

    from tests.conftest import FIX

    root = str(Path(__file__).resolve().parents[2])
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([root, os.environ.get("PYTHONPATH", "")]))
    argv = [str(FIX / "cpu_block.json.gz") if a == "T" else a for a in args]
    r = subprocess.run(
        [sys.executable, "-c", _TYPER_AFTER, *argv], capture_output=True, text=True, env=env, cwd=tmp_path
    )
    exit_line, imported = r.stdout.strip().splitlines()[-2:]
    assert exit_line in ("exit 0", "exit 3"), r.stdout + r.stderr  # (cpu_block: no GPU events, exit 3)
    assert imported == f"{typer} {typer}", (args, r.stderr)


@pytest.mark.parametrize(
    ("argv", "environ", "threads"),
    [
        (["perfreport", "analyze", "t.json"], {}, "1"),
        (["perfreport", "archs"], {}, "1"),
        (["perfreport"], {}, "1"),
        (["perfreport", "analyze", "t.json"], {"OPENBLAS_NUM_THREADS": "8"}, "8"),  # the user's count kept
        (["perfreport", "bench-pa", "--context", "2k"], {}, None),  # torch's BLAS: left alone
    ],
)
def test_the_command_line_asks_numpy_for_one_blas_thread(argv, environ, threads):
    from perfreport.cli.main import one_blas_thread

    one_blas_thread(argv, environ)
    assert environ.get("OPENBLAS_NUM_THREADS") == threads


def test_numpy_imported_by_analyze_runs_one_blas_thread(tmp_path):
    """The setting reaches numpy: the run's BLAS has one thread (numpy's threadpool probe)."""
    probe = (
        "import sys; sys.argv = ['perfreport', 'archs', '--json']\n"
        "import os; os.environ.pop('OPENBLAS_NUM_THREADS', None)\n"
        "from perfreport.cli import main; main.one_blas_thread(sys.argv)\n"
        "import numpy, ctypes, glob\n"
        "lib = glob.glob(os.path.join(os.path.dirname(numpy.__file__), os.pardir, 'numpy.libs', '*openblas*'))\n"
        "n = None\n"
        "if lib:\n"
        "    so = ctypes.CDLL(lib[0])\n"
        "    f = next((getattr(so, s, None) for s in ('scipy_openblas_get_num_threads64_', 'openblas_get_num_threads64_', 'openblas_get_num_threads') if getattr(so, s, None)), None)\n"
        "    n = f() if f else None\n"
        "print(n)\n"
    )
    import subprocess
    import sys

    r = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    if r.stdout.strip() == "None":
        pytest.skip("numpy's BLAS here is not a bundled OpenBLAS")
    assert r.stdout.strip() == "1"


def test_a_plain_line_ends_as_typer_ends_a_command(monkeypatch, tmp_path):
    """stdout closed by its reader (EPIPE): exit 1, stdout's rest to /dev/null; an EOF: Aborted!, 1."""
    import perfreport.cli.analyze as A
    import perfreport.writers.text as T

    quieted = []
    monkeypatch.setattr(T, "quiet_stdout", lambda: quieted.append(1))
    monkeypatch.setattr(A, "run", lambda **kw: (_ for _ in ()).throw(BrokenPipeError(32, "Broken pipe")))
    assert M._plain(["perfreport", "analyze", "t.json"]) == 1 and quieted == [1]
    monkeypatch.setattr(A, "run", lambda **kw: (_ for _ in ()).throw(EOFError()))
    assert M._plain(["perfreport", "analyze", "t.json"]) == 1
    monkeypatch.setattr(A, "run", lambda **kw: 3)
    assert M._plain(["perfreport", "analyze", "t.json", "-q"]) == 3
    assert M._plain(["perfreport", "analyze", "--help"]) is None
