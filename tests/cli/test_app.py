"""cli/app.py: the commands the app registers, --version, and main()'s exit codes: bad input 2
with one line, an interrupt 130 (or the signal's code) saying no partial output was left, a
closed pipe 0."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

import perfreport
import perfreport.cli.app as A
from perfreport.errors import BadInput, Interrupted


def test_the_commands_and_the_version():
    names = {c.name for c in A.app.registered_commands}
    assert {"analyze", "diff", "archs"} <= names
    assert "bench-pa" in names  # added by cli/bench_pa.register
    r = CliRunner().invoke(A.app, ["--version"])
    assert r.exit_code == 0 and perfreport.__version__ in r.stdout


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

    monkeypatch.setattr(A, "app", boom)
    monkeypatch.setattr(A, "exit_on_signals", lambda: None)
    with pytest.raises(SystemExit) as e:
        A.main()
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

    monkeypatch.setattr(A, "app", boom)
    monkeypatch.setattr(A, "exit_on_signals", lambda: None)
    with pytest.raises(SystemExit) as e:
        A.main()
    assert e.value.code == 128 + signal.SIGTERM
    assert "interrupted (SIGTERM); no partial output was left" in capsys.readouterr().err


# run the command line in a fresh interpreter, then list on stderr the modules it imported
_MODULES_AFTER = """
import sys
sys.argv = ["perfreport", *sys.argv[1:]]
from perfreport.cli.app import main
try:
    main()
except SystemExit as e:
    sys.stderr.write(f"exit {e.code}\\n")
sys.stderr.write("modules " + " ".join(sorted(sys.modules)) + "\\n")
"""
# what a run that reads no trace (or one the reader refuses) has no use for: pydantic (typer's
# coercion; cli/coerce.py takes the plain values), numpy and the stages after the reader (~0.25
# CPU s), rich when nothing is printed
_PIPELINE = {"numpy", "perfreport.tree", "perfreport.passes", "perfreport.models.registry", "perfreport.tables"}


def _modules_after(*args, tmp_path) -> tuple[str, set[str]]:
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = str(Path(__file__).resolve().parents[2])
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([root, os.environ.get("PYTHONPATH", "")]))
    r = subprocess.run(
        [sys.executable, "-c", _MODULES_AFTER, *args], capture_output=True, text=True, env=env, cwd=tmp_path
    )
    lines = r.stderr.splitlines()
    assert lines[-1].startswith("modules "), r.stderr
    return "\n".join(lines[:-1]), set(lines[-1].split()[1:])


@pytest.mark.parametrize(
    ("args", "also_not", "says"),
    [
        (["--help"], {"pydantic", "rich"}, "exit 0"),
        (["analyze", "--help"], {"pydantic", "rich"}, "exit 0"),
        (["analyze", "/nonexistent.json"], {"pydantic", "rich"}, "perfreport: /nonexistent.json: no such file"),
        (["analyze", "empty.json", "-q"], {"pydantic", "rich"}, "perfreport: empty.json: file is empty"),
        (["analyze", "bad.json", "-q"], {"pydantic", "rich"}, "perfreport: bad.json: not JSON: starts with byte b'n'"),
        (["archs", "--json"], {"pydantic", "rich"}, "exit 0"),
        (["archs"], {"pydantic"}, "exit 0"),  # a rich table
        # a value typer's pydantic coercion refuses, with its message
        (["analyze", "/nonexistent.json", "--jobs", "x"], {"rich"}, "Invalid value for '--jobs' / '-j'"),
    ],
)
def test_a_start_that_reads_no_trace_imports_no_pipeline(tmp_path, args, also_not, says):
    (tmp_path / "empty.json").write_bytes(b"")
    (tmp_path / "bad.json").write_bytes(b"not json")
    err, mods = _modules_after(*args, tmp_path=tmp_path)
    assert not mods & (_PIPELINE | also_not), sorted(mods & (_PIPELINE | also_not))
    assert says in err and ("exit 0" if says == "exit 0" else "exit 2") in err, err


def test_a_start_that_reads_a_trace_imports_the_pipeline(tmp_path):
    """The check above can fail: a run that reads a trace does import what it lists."""
    from tests.conftest import FIX

    err, mods = _modules_after("analyze", str(FIX / "cpu_block.json.gz"), "-q", "-o", "t.xlsx", tmp_path=tmp_path)
    assert _PIPELINE <= mods and "pydantic" not in mods and "rich" not in mods, err


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["bench-pa", "--context", "12q", "-q"], "perfreport bench-pa: --context: '12q' is not a size"),
        (["bench-pa", "--backend", "nope", "-q"], "perfreport bench-pa: --backend"),
        (["bench-pa", "--reps", "0", "-q"], "perfreport bench-pa: --reps must be in [1, 100000], got 0"),
        # the output files are checked before the GPU probe too
        (["bench-pa", "--context", "40", "--batch", "1", "--csv", "F", "--trace", "F", "-q"], "would both write"),
    ],
)
def test_bench_pa_refuses_a_mistyped_option_without_importing_torch(tmp_path, args, says):
    """Finding out whether there is a GPU imports torch (~3 CPU s): only a default or a check
    that depends on it may pay that, not an option refused by its syntax."""
    import importlib.util

    if importlib.util.find_spec("torch") is None:
        pytest.skip("torch not installed: nothing would import it anyway")
    err, mods = _modules_after(*args, tmp_path=tmp_path)
    assert "torch" not in mods and says in err and "exit 2" in err, err


def test_bench_pa_imports_torch_when_a_default_depends_on_the_gpu(tmp_path):
    """The check above can fail: a --query-len checked against the default context (which depends
    on whether there is a GPU) does import torch."""
    import importlib.util

    if importlib.util.find_spec("torch") is None:
        pytest.skip("torch not installed")
    err, mods = _modules_after("bench-pa", "--query-len", "100000", "-q", tmp_path=tmp_path)
    assert "torch" in mods and "exceeds --context" in err and "exit 2" in err, err


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
    from perfreport.cli.app import one_blas_thread

    one_blas_thread(argv, environ)
    assert environ.get("OPENBLAS_NUM_THREADS") == threads


def test_numpy_imported_by_analyze_runs_one_blas_thread(tmp_path):
    """The setting reaches numpy: the run's BLAS has one thread (numpy's threadpool probe)."""
    probe = (
        "import sys; sys.argv = ['perfreport', 'archs', '--json']\n"
        "import os; os.environ.pop('OPENBLAS_NUM_THREADS', None)\n"
        "from perfreport.cli import app; app.one_blas_thread(sys.argv)\n"
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
