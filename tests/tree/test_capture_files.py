"""tree/capture_files.py: which trace of a capture directory is read (vLLM execution_details.json,
one SGLang trace, one rank's per-size set), and one clear refusal for everything else."""

from __future__ import annotations

import json

import pytest

from perfreport.errors import BadInput
from perfreport.tree.capture_files import MAX_DETAILS_BYTES, capture_file


def _details(d, entries):
    (d / "execution_details.json").write_text(json.dumps(entries))


def test_vllm_one_capture_file_named_by_its_entry(tmp_path):
    _details(tmp_path, [{"file": "g.json.gz", "batch_size": 8, "mode": "FULL"}])
    assert capture_file(tmp_path, None) == (tmp_path / "g.json.gz", "capture_8_FULL")


def test_vllm_several_files_need_an_annotation(tmp_path):
    _details(
        tmp_path,
        [
            {"file": "a.json.gz", "batch_size": 8, "mode": "FULL"},
            {"file": "b.json.gz", "batch_size": 16, "mode": "PIECEWISE"},
        ],
    )
    with pytest.raises(BadInput, match=r"several capture files \(capture_8_FULL, capture_16_PIECEWISE\)"):
        capture_file(tmp_path, None)
    assert capture_file(tmp_path, "capture_16_PIECEWISE") == (tmp_path / "b.json.gz", "capture_16_PIECEWISE")
    with pytest.raises(BadInput, match="names no capture capture_4_FULL"):
        capture_file(tmp_path, "capture_4_FULL")


@pytest.mark.parametrize("body", ["[{}]", "{not json", '[{"file": "a"}]', "7"])
def test_vllm_unreadable_details(tmp_path, body):
    (tmp_path / "execution_details.json").write_text(body)
    with pytest.raises(BadInput, match="unreadable execution_details.json"):
        capture_file(tmp_path, None)


def test_vllm_details_too_large(tmp_path):
    (tmp_path / "execution_details.json").write_bytes(b" " * (MAX_DETAILS_BYTES + 1))
    with pytest.raises(BadInput, match="larger than 16 MiB"):
        capture_file(tmp_path, None)


def test_sglang_one_trace_keeps_the_annotation(tmp_path):
    (tmp_path / "capture.json.gz").write_bytes(b"")
    (tmp_path / "notes.txt").write_text("x")
    assert capture_file(tmp_path, "capture_1_FULL") == (tmp_path / "capture.json.gz", "capture_1_FULL")


def test_sglang_per_size_set_largest_first(tmp_path):
    for bs in (1, 16, 4):
        (tmp_path / f"Runner_bs_{bs}_rank0.json.gz").write_bytes(b"")
    files, ann = capture_file(tmp_path, None)
    assert [f.name for f in files] == [
        "Runner_bs_16_rank0.json.gz",
        "Runner_bs_4_rank0.json.gz",
        "Runner_bs_1_rank0.json.gz",
    ]
    assert ann is None


def test_sglang_refusals(tmp_path):
    with pytest.raises(BadInput, match="no execution_details.json \\(vLLM\\) and no .json/.json.gz"):
        capture_file(tmp_path, None)
    (tmp_path / "Runner_bs_1_rank0.json.gz").write_bytes(b"")
    (tmp_path / "Runner_bs_2_rank1.json.gz").write_bytes(b"")
    with pytest.raises(BadInput, match="2 trace files that are not one rank's"):
        capture_file(tmp_path, None)
