"""perfreport/cli/outputs.py: the writes one-trace and multi-trace analyze share."""

from __future__ import annotations

from rich.console import Console

from perfreport.cli.outputs import print_lines, write_outputs


class _Report:
    coverage = None
    sheets = ()

    def sheet(self, name):
        raise KeyError(f"no sheet {name!r} (sheets: a, b)")

    def to_excel(self, path):
        raise AssertionError("nothing is written after an unknown --sheet")


def test_unknown_sheet_is_one_escaped_line_and_nothing_written(capsys):
    err = Console(stderr=True, record=True, width=400)
    ok = write_outputs(_Report(), err, sheet="x\x1b[31m\ny", xlsx="never.xlsx")
    assert ok is None
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("perfreport: --sheet: no sheet")
    assert "\x1b" not in lines[0] and "\\x1b" in lines[0]


def test_quiet_writes_without_wrote_lines(tmp_path, capsys):
    written = []

    class R(_Report):
        sheets = ("s",)

        def to_excel(self, path):
            written.append(("xlsx", path))
            return ["a warning"]

        def to_csv_dir(self, path, protect=()):
            written.append(("csv", path))
            return [path / "s.csv", path / "notes.csv"]

    err = Console(stderr=True, record=True, width=400)
    assert write_outputs(R(), err, xlsx=tmp_path / "r.xlsx", csv_dir=tmp_path / "c", quiet=True) == []
    assert [k for k, _ in written] == ["xlsx", "csv"]
    assert capsys.readouterr().err == "perfreport: warning: a warning\n"
    assert err.export_text() == ""
    lines = write_outputs(R(), err, csv_dir=tmp_path / "c")
    assert err.export_text() == ""  # the caller prints them, once committed and after the summary
    print_lines(err, lines)
    assert err.export_text() == f"wrote 2 CSV files (one per sheet, and notes.csv) to {tmp_path / 'c'}\n"
