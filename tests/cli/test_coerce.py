"""cli/coerce.py: plain option values coerced without pydantic give what typer's own coercion gives
(the value, or the same error message), and the app's options take that path."""

from __future__ import annotations

import math
from pathlib import Path
from typing import List, Optional

import pytest
import typer
import typer.core
from typer.testing import CliRunner

from perfreport.cli import coerce
from perfreport.cli import help as H


def _app(cls):
    """A one-command app over every plain type; ``got`` receives the values it was called with."""
    app, got = typer.Typer(), {}

    @app.command(cls=cls)
    def cmd(
        words: List[str] = typer.Argument(None),
        s: Optional[str] = typer.Option(None, "--s"),
        i: Optional[int] = typer.Option(None, "--i"),
        f: float = typer.Option(10.0, "--f"),
        p: Optional[Path] = typer.Option(None, "--p"),
        ps: List[Path] = typer.Option([], "--ps"),
        b: bool = typer.Option(False, "--b"),
        nb: Optional[bool] = typer.Option(None, "--nb/--no-nb"),
    ):
        got.clear()
        got.update(words=words, s=s, i=i, f=f, p=p, ps=ps, b=b, nb=nb)

    return app, got


def _both(args):
    """(exit code, output, values) through typer's coercion and through cli/coerce.py's."""
    out = []
    for cls in (typer.core.TyperCommand, H.Command):
        app, got = _app(cls)
        r = CliRunner().invoke(app, args)
        vals = {k: (repr(v), type(v)) for k, v in got.items()}  # repr: nan == nan
        out.append((r.exit_code, r.output, vals))
    return out


INTS = ["0", "7", "-3", "42", "007", "+5", " 5", "1_000", "1e3", "x", "", "-", "99999999999999999999", "١٢"]
FLOATS = ["0", "1", "-0", "1.5", "-0.0", "0.1", ".5", "1.", "1e-3", "inf", "nan", "x", "", "3.14159265358979323846"]
PATHS = ["a/b.json", ".", "-", "", "x y", "~/t.json"]


@pytest.mark.parametrize("value", INTS)
def test_int_values_as_typer_gives_them(value):
    a, b = _both(["--i", value])
    assert a == b


@pytest.mark.parametrize("value", FLOATS)
def test_float_values_as_typer_gives_them(value):
    a, b = _both(["--f", value])
    assert a == b


@pytest.mark.parametrize("value", PATHS)
def test_path_values_as_typer_gives_them(value, tmp_path):
    a, b = _both(["--p", value, "--ps", value, "--ps", str(tmp_path)])
    assert a == b


@pytest.mark.parametrize(
    "args",
    [[], ["w1", "w2", "--s", "abc"], ["--s", ""], ["--s", "ü"], ["--b", "--nb"], ["--no-nb"], ["--i"], ["--zz"]],
)
def test_strings_flags_defaults_and_usage_errors_as_typer_gives_them(args):
    a, b = _both(args)
    assert a == b


def test_plain_cases_never_build_a_pydantic_adapter(monkeypatch):
    """The values above that are plain (digits, a path, a string) are coerced here: typer's
    adapter is built only for the rest (1e3, x, ...), which it then keeps for the option."""
    built = []
    real = coerce.build_runtime_param
    monkeypatch.setattr(coerce, "build_runtime_param", lambda d: built.append(d) or real(d))
    app, got = _app(H.Command)
    r = CliRunner().invoke(app, ["w", "--s", "a", "--i", "-3", "--f", "0.25", "--p", "x", "--ps", "y", "--nb"])
    assert r.exit_code == 0 and got["i"] == -3 and got["f"] == 0.25 and got["p"] == Path("x")
    assert got["ps"] == [Path("y")] and got["words"] == ["w"] and got["nb"] is True
    assert built == []
    r = CliRunner().invoke(app, ["--f", "1e3"])
    assert r.exit_code == 0 and math.isclose(got["f"], 1000.0)
    assert [d.annotation for d in built] == [float]


def test_the_installed_typer_has_what_light_uses():
    """With another typer, :func:`coerce.light` changes nothing (typer's coercion throughout,
    pydantic imported again): this says so instead of the start getting slower unseen."""
    assert coerce.RuntimeParam is not None
    app, _ = _app(H.Command)
    cmd = typer.main.get_command(app)
    assert coerce.light(cmd.params) == len(cmd.params) == 10  # 8, and the 2 completion options
    assert coerce.light(cmd.params) == 0  # once per option
