"""cli/analyze_options.py: one entry per parameter of the analyze command, its names unique, and
the table is what ``perfreport analyze --help`` shows and what ``cli.analyze.run`` takes."""

from __future__ import annotations

import inspect

from typer.testing import CliRunner

from perfreport.cli.analyze import run
from perfreport.cli.analyze_options import OPTIONS, TRACES
from perfreport.cli.app import app


def test_names_are_unique_and_run_takes_exactly_them():
    dests = [TRACES.dest, *(o.dest for o in OPTIONS)]
    flags = [f for o in OPTIONS for d in o.flags for f in d.split("/")]
    assert len(set(dests)) == len(dests) and len(set(flags)) == len(flags)
    ps = inspect.signature(run).parameters.values()
    assert [p.name for p in ps] == dests and all(p.kind is p.KEYWORD_ONLY for p in ps)


def test_the_help_lists_every_option_with_its_text():
    out = " ".join(CliRunner().invoke(app, ["analyze", "--help"], terminal_width=400).output.split())
    for o in OPTIONS:
        for d in o.flags:
            assert d.split("/")[0] in out
        assert " ".join(o.help.split())[:40] in out, o.dest
