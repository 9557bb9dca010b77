"""cli/typer_table.py: typer reads the table's arguments from the callback's signature, and the
callback exits with what the command's function returns."""

from __future__ import annotations

import inspect
import typing
from pathlib import Path
from typing import List, Optional

import pytest
import typer
from typer.models import ArgumentInfo, OptionInfo

from perfreport.cli.analyze_options import Opt
from perfreport.cli.typer_table import typer_callback

ARG = Opt("files", List[str], ..., (), "FILE", "the files")
OPTS = (
    Opt("out", Optional[Path], None, ("-o", "--out"), "FILE", "where"),
    Opt("n", int, 3, ("--n",), None, "how many"),
    Opt("loud", bool, False, ("--loud/--soft",), None, "volume"),
)


def test_the_signature_is_the_tables():
    cb = typer_callback("cmd", ARG, OPTS, lambda **kw: 0, "Do it.")
    ps = list(inspect.signature(cb).parameters.values())
    assert [p.name for p in ps] == ["files", "out", "n", "loud"]
    assert isinstance(ps[0].default, ArgumentInfo) and ps[0].default.metavar == "FILE"
    assert all(isinstance(p.default, OptionInfo) for p in ps[1:])
    assert [p.default.param_decls for p in ps[1:]] == [("-o", "--out"), ("--n",), ("--loud/--soft",)]
    assert [p.default.default for p in ps[1:]] == [None, 3, False]
    assert typing.get_type_hints(cb) == {"files": List[str], "out": Optional[Path], "n": int, "loud": bool}
    assert cb.__doc__ == "Do it." and cb.__name__ == "cmd"


def test_typer_parses_the_table_and_the_callback_exits_with_runs_code():
    from typer.testing import CliRunner

    seen = []

    def run(**kw):
        seen.append(kw)
        return 3

    app = typer.Typer()
    app.command("cmd")(typer_callback("cmd", ARG, OPTS, run, "Do it."))
    app.command("other")(lambda: None)
    r = CliRunner().invoke(app, ["cmd", "a", "b", "-o", "x.txt", "--n", "5", "--soft"])
    assert r.exit_code == 3, r.output
    assert seen == [{"files": ["a", "b"], "out": Path("x.txt"), "n": 5, "loud": False}]
    r = CliRunner().invoke(app, ["cmd", "--help"])
    assert r.exit_code == 0 and "--loud" in r.output and "how many" in r.output


def test_a_direct_call_raises_typers_exit():
    cb = typer_callback("cmd", ARG, OPTS, lambda **kw: 2, "")
    with pytest.raises(typer.Exit) as e:
        cb(files=["a"], out=None, n=3, loud=False)
    assert e.value.exit_code == 2
