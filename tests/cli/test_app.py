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
