"""One progress display over every stage of ``perfreport analyze`` (perfreport/cli/progress.py):
the read's bytes, then the tree, the passes, the sheets and each file written, on one line that is
gone once the run ends; nothing at all when disabled (a pipe, ``--quiet``)."""

from __future__ import annotations

import io

from rich.console import Console

from perfreport.cli.outputs import write_outputs
from perfreport.cli.progress import StageProgress
from perfreport.pipeline import analyze
from tests.conftest import FIX

TRACE = FIX / "h100_qwen_0.5b.json.gz"


def _console():
    buf = io.StringIO()
    return Console(file=buf, force_terminal=True, width=100), buf


def test_disabled_prints_nothing():
    con, buf = _console()
    with StageProgress(con, 1000, enabled=False) as p:
        p.bytes(500)
        p.stage("building the tree")
    assert buf.getvalue() == ""


def test_every_stage_of_a_run_goes_through_the_one_display(tmp_path):
    seen, read = [], []

    class Recording(StageProgress):
        def stage(self, text):
            seen.append(text)
            super().stage(text)

        def bytes(self, n):
            read.append(n)
            super().bytes(n)

    con, buf = _console()
    with Recording(con, TRACE.stat().st_size) as prog:
        report = analyze(str(TRACE), on_progress=prog.bytes, on_stage=prog.stage)
        wrote = write_outputs(report, con, xlsx=tmp_path / "r.xlsx", csv_dir=tmp_path / "c", on_stage=prog.stage)
        (task,) = prog._prog.tasks  # one display, one line: its text is the current stage
        assert task.description == "writing the CSV files"
    assert seen == [
        "building the tree",
        "running the passes",
        "building the sheets",
        "writing the workbook",
        "writing the CSV files",
    ]
    assert read and read[-1] == TRACE.stat().st_size and read == sorted(read)  # the bar over the file's bytes
    out = buf.getvalue()
    assert out.startswith("\x1b[?25l") and "reading" in out  # drawn on the terminal ...
    assert out.endswith("\x1b[?25h\r\x1b[1A\x1b[2K")  # ... and erased at the end (cursor back, line cleared)
    assert len(list((tmp_path / "c").iterdir())) == len(report.sheets) + 1
    assert wrote == [
        f"wrote {tmp_path / 'r.xlsx'}",
        f"wrote {len(report.sheets) + 1} CSV files (one per sheet, and notes.csv) to {tmp_path / 'c'}",
    ]


def test_diff_shows_side_a_then_side_b_on_the_same_display():
    from perfreport.diff import diff

    seen = []

    class Recording(StageProgress):
        def stage(self, text):
            super().stage(text)
            seen.append(self._prog.tasks[0].description)

        def begin(self, label, total):
            super().begin(label, total)
            seen.append((self._prog.tasks[0].description, self._prog.tasks[0].total))

    con, _ = _console()
    size = TRACE.stat().st_size
    with Recording(con, None) as prog:
        rep = diff(
            TRACE,
            TRACE,
            on_side=lambda label, path: prog.begin(label, size),
            on_progress=prog.bytes,
            on_stage=prog.stage,
        )
    stages = ["building the tree", "running the passes", "building the sheets"]
    assert seen == [("A: reading", size), *[f"A: {s}" for s in stages], ("B: reading", size)] + [
        f"B: {s}" for s in stages
    ]
    assert "diff_ops" in rep.sheet_names
