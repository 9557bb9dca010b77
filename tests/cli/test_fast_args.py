"""cli/fast_args.py: a plain ``analyze`` line gives, without typer, the very values typer gives;
every other line is left to typer (None)."""

from __future__ import annotations

from pathlib import Path

import pytest
import typer
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from perfreport.cli import help as H
from perfreport.cli.analyze_options import DOC, OPTIONS, TRACES
from perfreport.cli.fast_args import leaf, parse
from perfreport.cli.typer_table import typer_callback

_SEEN: list = []


def _record(**values) -> int:
    _SEEN.append(values)
    return 0


def _typer_app():
    """The analyze command as the app builds it (same table, classes and epilogs), recording
    the values typer hands it."""
    app = typer.Typer(cls=H.Group, add_completion=False, rich_markup_mode=None, context_settings=H.CONTEXT)
    app.command("analyze")(typer_callback("analyze", TRACES, OPTIONS, _record, DOC))
    app.command("other")(lambda: None)  # two commands: typer keeps "analyze" as a subcommand
    H.add_epilogs(app)
    return app


APP = _typer_app()


def typer_values(args):
    """What typer hands the command for ``args``, or None where it refuses the line."""
    _SEEN.clear()
    r = CliRunner().invoke(APP, ["analyze", *args])
    return _SEEN[0] if r.exit_code == 0 and _SEEN else None


PLAIN = [
    (["t.json"], {}),
    (["-", "-o", "r.xlsx", "-q"], {"traces": ["-"], "output": Path("r.xlsx"), "quiet": True}),
    (
        ["a.json", "--sheet", "unified", "b.json", "--format", "tsv", "--top", "3", "--no-summary"],
        {"traces": ["a.json", "b.json"], "sheet": "unified", "fmt": "tsv", "top": 3, "summary": False},
    ),
    (
        ["t.json", "--models", "m1.py", "--models", "m2.py", "-j", "4", "--min-coverage", "90.5"],
        {"models": [Path("m1.py"), Path("m2.py")], "jobs": 4, "min_coverage": 90.5},
    ),
    (
        ["t.json", "--short-kernel-us", "5", "--summary", "--audit"],
        {"short_kernel_us": 5.0, "summary": True, "audit": True},
    ),
    (["t.json", "--target-roofline", "-5"], None),  # a value starting with '-': typer's to read
    (
        ["t.json", "--steps", "2:4", "--graph-capture", "cap#capture_8_decode"],
        {"steps": "2:4", "graph_capture": "cap#capture_8_decode"},
    ),
]


@pytest.mark.parametrize(("args", "changed"), PLAIN)
def test_plain_lines_give_typers_values(args, changed):
    got = parse(args, TRACES, OPTIONS)
    if changed is None:
        assert got is None
        return
    want = typer_values(args)
    assert want is not None and got == want
    defaults = {o.dest: o.default for o in OPTIONS}
    for k, v in changed.items():
        assert got[k] == v and (k == "traces" or v != defaults[k])


@pytest.mark.parametrize(
    "args",
    [
        [],  # no trace: typer says it is missing
        ["--help"],
        ["-h"],
        ["t.json", "--output=r.xlsx"],
        ["t.json", "-qo", "r.xlsx"],
        ["t.json", "-q", "--quiet"],
        ["t.json", "--top"],
        ["t.json", "--top", "x"],
        ["t.json", "--top", "1e3"],
        ["t.json", "--top", "007"],
        ["t.json", "--csv-dir", ""],
        ["t.json", "--no-such-option"],
        ["--", "t.json"],
        ["-5"],
    ],
)
def test_other_lines_are_typers(args):
    assert parse(args, TRACES, OPTIONS) is None


def test_leaf_types():
    from typing import List, Optional

    assert leaf(Optional[Path]) == (Path, False) and leaf(List[Path]) == (Path, True) and leaf(float) == (float, False)


_FLAGS = [f for o in OPTIONS for d in o.flags for f in d.split("/")]
_VALUES = ["", "x", "a b", "-", "-x", "10", "1.5", "-3", "0", "007", "1e3", "é", "12345678901234567890", "t.json"]
_TOKEN = st.one_of(st.sampled_from(_FLAGS), st.sampled_from(_VALUES), st.sampled_from(["-h", "--", "-q", "-o"]))


@settings(max_examples=300, deadline=None, derandomize=True)
@given(st.lists(_TOKEN, max_size=8))
def test_generated_lines_give_typers_values_or_none(args):
    got = parse(args, TRACES, OPTIONS)
    if got is not None:
        assert typer_values(args) == got
