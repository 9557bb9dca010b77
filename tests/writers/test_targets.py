"""writers/targets.py: output targets refused before the analysis starts (one BadInput line each)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from perfreport.errors import BadInput
from perfreport.writers.targets import (
    check_csv_names,
    check_existing,
    check_outputs,
    default_output,
    input_files,
    refuse_input,
)


def test_default_output_beside_the_trace_or_in_the_current_directory(tmp_path):
    t = tmp_path / "run.json.gz"
    t.write_bytes(b"x")
    assert default_output(str(t)) == tmp_path / "run_perf_report.xlsx"
    assert default_output(str(tmp_path / "plain.json")) == tmp_path / "plain_perf_report.xlsx"
    assert default_output("-") == Path("stdin_perf_report.xlsx")
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    assert default_output(str(fifo)) == Path("pipe_perf_report.xlsx")


def test_input_files_names_every_input(tmp_path):
    cap = tmp_path / "cap"
    cap.mkdir()
    (cap / "a.json.gz").write_bytes(b"")
    arch = tmp_path / "gpu.json"
    arch.write_text("{}")
    got = input_files(
        "t.json", graph_capture=f"{cap}#capture_1_FULL", arch=str(arch), models=["m.py"], model_config="c.json"
    )
    assert got == {
        "t.json": "the input trace",
        "c.json": "the --model-config file",
        str(cap / "a.json.gz"): "a --graph-capture input",
        str(arch): "the --arch spec file",
        "m.py": "a --models file",
    }
    assert input_files("-", arch="h100") == {}


def test_an_output_that_is_an_input_is_refused_even_through_a_link(tmp_path):
    trace = tmp_path / "t.json"
    trace.write_text("{}")
    link = tmp_path / "out.xlsx"
    os.link(trace, link)
    inputs = input_files(str(trace))
    with pytest.raises(BadInput, match=r"is the input trace \(.*t.json\); refusing to overwrite an input"):
        check_outputs(link, None, inputs)
    with pytest.raises(BadInput, match="refusing to overwrite an input"):
        refuse_input(link, inputs)
    check_outputs([tmp_path / "new.xlsx", None], None, inputs)  # a fresh name passes


def test_bad_workbook_targets(tmp_path):
    with pytest.raises(BadInput, match="directory .* does not exist"):
        check_outputs(tmp_path / "no" / "o.xlsx", None, {})
    f = tmp_path / "file"
    f.write_text("")
    with pytest.raises(BadInput, match="file is a file, not a directory"):
        check_outputs(f / "o.xlsx", None, {})
    with pytest.raises(BadInput, match="a part of the path is a file, not a directory"):
        check_outputs(f / "sub" / "o.xlsx", None, {})
    with pytest.raises(BadInput, match=r"file name too long \(300 bytes; the limit is 255\)"):
        check_outputs(tmp_path / ("x" * 300), None, {})
    with pytest.raises(BadInput, match="is a directory, not a file name to write"):
        check_outputs(tmp_path, None, {})


def test_csv_dir_may_be_created_but_not_be_a_file(tmp_path):
    check_outputs(None, tmp_path / "new" / "deeper", {})
    assert not (tmp_path / "new").exists()  # checked, not created
    f = tmp_path / "f"
    f.write_text("")
    with pytest.raises(BadInput, match="is a file, not a directory"):
        check_outputs(None, f, {})


def test_csv_names_that_are_directories_are_refused(tmp_path):
    (tmp_path / "ops.csv").mkdir()
    with pytest.raises(BadInput, match="is a directory"):
        check_outputs(None, tmp_path, {})
    with pytest.raises(BadInput, match="is a directory"):
        check_csv_names(tmp_path, ["kernels", "ops"], {})
    check_csv_names(tmp_path, ["kernels"], {})
    with pytest.raises(BadInput, match="is a directory"):
        check_existing(tmp_path / "ops.csv", {})
