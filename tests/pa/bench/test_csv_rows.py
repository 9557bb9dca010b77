"""pa/bench/csv_rows.py: rows flushed to ``.<name>.partial`` as measured; renamed on success, kept on failure."""

from __future__ import annotations

import csv
import os

from perfreport.pa.bench.csv_rows import RowWriter, partial_path


def _rows(p):
    with open(p, newline="") as fh:
        return list(csv.reader(fh))


def test_partial_path(tmp_path):
    assert partial_path(tmp_path / "out.csv") == tmp_path / ".out.csv.partial"


def test_rows_are_on_disk_before_close_and_the_target_appears_on_success(tmp_path):
    target = tmp_path / "out.csv"
    target.write_text("previous\n")
    w = RowWriter(target, ["backend", "us", "note"])
    w.write({"backend": "triton", "us": 12.5, "extra": "ignored"})
    assert _rows(w.tmp) == [["backend", "us", "note"], ["triton", "12.5", ""]]
    assert target.read_text() == "previous\n"  # untouched until the run ends
    w.close()
    w.close()  # twice is harmless
    assert _rows(target) == [["backend", "us", "note"], ["triton", "12.5", ""]]
    assert not w.tmp.exists()


def test_file_mode_follows_the_umask(tmp_path):
    old = os.umask(0o027)
    try:
        w = RowWriter(tmp_path / "m.csv", ["a"])
        w.close()
    finally:
        os.umask(old)
    assert (tmp_path / "m.csv").stat().st_mode & 0o777 == 0o640


def test_a_failed_run_keeps_the_partial_rows_and_discard_removes_them(tmp_path):
    target = tmp_path / "out.csv"
    w = RowWriter(target, ["a", "b"])
    w.write({"a": 1, "b": None})
    w.close(ok=False)
    assert not target.exists()
    assert _rows(partial_path(target)) == [["a", "b"], ["1", ""]]
    w.discard()
    assert not partial_path(target).exists()
    w.discard()  # nothing left: no error
