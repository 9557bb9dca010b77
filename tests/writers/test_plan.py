"""writers/plan.py and writers/atomic.transaction (issue 22): outputs checked against each other
before any work; all of a run's files renamed together, or none."""

from __future__ import annotations

import os
import signal

import pytest

from perfreport.errors import BadInput, Interrupted
from perfreport.writers.atomic import atomic_path, staging_dir, transaction
from perfreport.writers.plan import OutputPlan


def test_two_options_on_one_file_are_named_both(tmp_path):
    with pytest.raises(BadInput, match="-o and --html would both write"):
        OutputPlan({}).file(tmp_path / "r.xlsx", "-o").file(tmp_path / "r.xlsx", "--html").check()


def test_same_file_through_a_symlinked_directory(tmp_path):
    (tmp_path / "real").mkdir()
    os.symlink("real", tmp_path / "link")
    with pytest.raises(BadInput, match="would both write"):
        OutputPlan({}).file(tmp_path / "real/a.json", "-o").file(tmp_path / "link/a.json", "--json").check()


def test_hard_links_are_one_file(tmp_path):
    (tmp_path / "a").write_text("x")
    os.link(tmp_path / "a", tmp_path / "b")
    with pytest.raises(BadInput, match="would both write"):
        OutputPlan({}).file(tmp_path / "a", "-o").file(tmp_path / "b", "--json").check()


def test_csv_dir_owns_its_csv_files_only(tmp_path):
    (tmp_path / "c").mkdir()
    plan = OutputPlan({}).directory(tmp_path / "c", "--csv-dir")
    plan.file(tmp_path / "c" / "report.xlsx", "-o").check()  # not a .csv: fine
    with pytest.raises(BadInput, match="inside --csv-dir"):
        OutputPlan({}).directory(tmp_path / "c", "--csv-dir").file(tmp_path / "c" / "x.csv", "-o").check()


def test_file_in_a_directory_made_later_is_checked_against_inputs(tmp_path):
    (tmp_path / "per").mkdir()
    trace = tmp_path / "per" / "r_perf_report.xlsx"
    trace.write_text("{}")
    plan = OutputPlan({str(trace): "an input trace"}).directory(tmp_path / "per", "--per-rank", suffix="\0")
    with pytest.raises(BadInput, match="is an input trace"):
        plan.file(trace, "the --per-rank workbook of r.json", in_dir=True).check()
    OutputPlan({}).directory(tmp_path / "new", "--per-rank", "\0").file(
        tmp_path / "new" / "a.xlsx", "x", in_dir=True
    ).check()  # the directory does not exist yet: fine


def _write(p, text):
    with atomic_path(p) as tmp:
        tmp.write_text(text)


def test_transaction_renames_all_at_the_end(tmp_path):
    with transaction():
        _write(tmp_path / "a", "A")
        _write(tmp_path / "b", "B")
        assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()
    assert (tmp_path / "a").read_text() == "A" and (tmp_path / "b").read_text() == "B"
    assert sorted(os.listdir(tmp_path)) == ["a", "b"]


def test_failure_leaves_none_and_the_previous_files(tmp_path):
    (tmp_path / "a").write_text("previous")
    with pytest.raises(RuntimeError):
        with transaction():
            _write(tmp_path / "a", "new")
            _write(tmp_path / "b", "B")
            raise RuntimeError("the third output failed")
    assert os.listdir(tmp_path) == ["a"] and (tmp_path / "a").read_text() == "previous"


def test_interrupt_removes_staged_worker_files_and_made_dirs(tmp_path):
    with pytest.raises(Interrupted):
        with transaction() as t:
            stage = staging_dir(tmp_path / "per" / "sub")
            (stage / "r0.xlsx").write_text("from a worker")
            t.add(stage / "r0.xlsx", tmp_path / "per" / "sub" / "r0.xlsx")
            raise Interrupted(signal.SIGTERM)
    assert os.listdir(tmp_path) == []


def test_staged_files_move_in_on_commit(tmp_path):
    with transaction() as t:
        stage = staging_dir(tmp_path / "per")
        (stage / "r0.xlsx").write_text("w")
        t.add(stage / "r0.xlsx", tmp_path / "per" / "r0.xlsx")
    assert os.listdir(tmp_path / "per") == ["r0.xlsx"]


def test_inner_transaction_joins_the_outer(tmp_path):
    with pytest.raises(RuntimeError):
        with transaction():
            with transaction():
                _write(tmp_path / "a", "A")
            assert not (tmp_path / "a").exists()  # the inner block did not commit
            raise RuntimeError
    assert os.listdir(tmp_path) == []
