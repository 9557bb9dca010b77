"""cli/app.py: the commands the app registers, --version, and what a start imports."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

import perfreport
import perfreport.cli.app as A


def test_the_commands_and_the_version():
    names = {c.name for c in A.app.registered_commands}
    assert {"analyze", "diff", "archs"} <= names
    assert "bench-pa" in names  # added by cli/bench_pa.register
    r = CliRunner().invoke(A.app, ["--version"])
    assert r.exit_code == 0 and perfreport.__version__ in r.stdout


# run the command line in a fresh interpreter, then list on stderr the modules it imported
_MODULES_AFTER = """
import sys
sys.argv = ["perfreport", *sys.argv[1:]]
from perfreport.cli.main import main
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


def _modules_after(*args, tmp_path, first=()) -> tuple[str, set[str]]:
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = str(Path(__file__).resolve().parents[2])
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([*map(str, first), root, os.environ.get("PYTHONPATH", "")]))
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
    on whether there is a GPU: 300,1k without one) does import torch. The torch it finds is a
    stand-in that answers the one question asked (cli/bench_pa_args.has_gpu:
    torch.cuda.is_available(), no GPU): the same check with or without torch installed, without
    torch's ~3 CPU s import."""
    stub = tmp_path / "stub" / "torch"
    stub.mkdir(parents=True)
    (stub / "__init__.py").write_text("class cuda:\n    is_available = staticmethod(lambda: False)\n")
    err, mods = _modules_after("bench-pa", "--query-len", "100000", "-q", tmp_path=tmp_path, first=[stub.parent])
    assert "torch" in mods and "exceeds --context 300 " in err and "exit 2" in err, err
