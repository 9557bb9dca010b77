"""writers/atomic.py: write beside the target then rename; a failure leaves the previous file; a
transaction renames every output together or none."""

from __future__ import annotations

import os
import stat

import pytest

from perfreport.errors import BadInput
from perfreport.writers.atomic import atomic_path, kind, resolve_target, staging_dir, transaction


def _leftovers(d):
    return sorted(p.name for p in d.iterdir() if p.name.startswith("."))


def test_success_renames_with_the_usual_mode(tmp_path):
    target = tmp_path / "out.xlsx"
    old = os.umask(0o022)
    try:
        with atomic_path(target, ".xlsx") as tmp:
            assert tmp.parent == tmp_path and tmp.name.startswith(".out.xlsx.") and tmp.suffix == ".xlsx"
            tmp.write_text("new")
            assert not target.exists()
    finally:
        os.umask(old)
    assert target.read_text() == "new"
    assert stat.S_IMODE(target.stat().st_mode) == 0o644
    assert _leftovers(tmp_path) == []


def test_an_error_while_writing_keeps_the_previous_file(tmp_path):
    target = tmp_path / "out.csv"
    target.write_text("previous")
    with pytest.raises(RuntimeError):
        with atomic_path(target) as tmp:
            tmp.write_text("half")
            raise RuntimeError("boom")
    assert target.read_text() == "previous" and _leftovers(tmp_path) == []


def test_an_os_error_becomes_one_line(tmp_path):
    target = tmp_path / "out.csv"
    target.write_text("previous")
    with pytest.raises(
        BadInput, match=r"write failed \(No space left on device\); nothing written; the previous file is unchanged"
    ):
        with atomic_path(target):
            raise OSError(28, "No space left on device")
    assert target.read_text() == "previous" and _leftovers(tmp_path) == []
    with pytest.raises(BadInput, match="cannot write in"):
        with atomic_path(tmp_path / "no" / "x.csv"):
            pass


def test_a_symlink_to_a_file_stays_a_link(tmp_path):
    real = tmp_path / "real.json"
    real.write_text("old")
    link = tmp_path / "link.json"
    link.symlink_to(real)
    assert resolve_target(link) == real and resolve_target(real) == real
    with atomic_path(link) as tmp:
        tmp.write_text("new")
    assert link.is_symlink() and real.read_text() == "new"


def test_kind_names_what_is_not_a_regular_file(tmp_path):
    os.mkfifo(tmp_path / "fifo")
    assert kind(os.stat(tmp_path / "fifo").st_mode) == "a FIFO"
    assert kind(os.stat(tmp_path).st_mode) == "a directory"
    assert kind(os.stat("/dev/null").st_mode) == "a character device"


def test_a_transaction_renames_all_together_or_none(tmp_path):
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    with transaction():
        for t in (a, b):
            with atomic_path(t) as tmp:
                tmp.write_text(t.name)
        assert not a.exists() and not b.exists()  # waiting for the end of the block
    assert (a.read_text(), b.read_text()) == ("a.txt", "b.txt")
    a.unlink()
    b.write_text("previous")
    with pytest.raises(KeyboardInterrupt):
        with transaction():
            with atomic_path(a) as tmp:
                tmp.write_text("x")
            with atomic_path(b) as tmp:
                tmp.write_text("y")
            raise KeyboardInterrupt
    assert not a.exists() and b.read_text() == "previous" and _leftovers(tmp_path) == []


def test_staging_dir_is_removed_with_what_it_made_on_abort(tmp_path):
    final = tmp_path / "per_rank" / "deep"
    with pytest.raises(RuntimeError):
        with transaction():
            d = staging_dir(final)
            assert d.parent == final and d.name.startswith(".perfreport-staging.")
            (d / "r0.xlsx").write_text("x")
            raise RuntimeError
    assert not (tmp_path / "per_rank").exists()
    with transaction():
        d = staging_dir(final)
    assert final.is_dir() and not d.exists()
