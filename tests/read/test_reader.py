"""read_trace: gzip by content, stdin, any chunking, a raw trace consumed once (key order and
metadata: test_envelope.py; columns and records: test_kineto.py)."""

from __future__ import annotations

import gzip
import subprocess
import sys

import pytest

from perfreport.read import read_trace
from tests.conftest import FIX
from tests.read.kit import doc as _doc
from tests.read.kit import read_and_build, x_event


def test_gzip_detected_by_content_not_name(tmp_path):
    gz = tmp_path / "looks_plain.json"
    gz.write_bytes(gzip.compress(_doc()))
    plain = tmp_path / "looks_gz.json.gz"
    plain.write_bytes(_doc())
    a, b = read_trace(str(gz)), read_trace(str(plain))
    assert a.records.n_events == b.records.n_events == 6


def test_many_small_chunks_split_correctly(tmp_path, monkeypatch):
    """Force tiny reads so cuts land inside strings and nested objects; result must not change."""
    import perfreport.read.source as source

    p = tmp_path / "t.json"
    p.write_bytes(_doc("last", 1))
    ref = read_trace(str(p))
    monkeypatch.setattr(source, "CHUNK", 37)
    got = read_trace(str(p))
    assert [o.name for o in got.records.cpu] == [o.name for o in ref.records.cpu]
    assert got.records.cpu[0].args == ref.records.cpu[0].args
    assert got.meta == ref.meta


def test_real_trace_chunked_equals_whole(monkeypatch):
    import perfreport.read.source as source

    path = str(FIX / "mi210_gpu_only.json.gz")
    whole = read_trace(path)
    monkeypatch.setattr(source, "CHUNK", 4096)
    small = read_trace(path)
    assert small.records.n_events == whole.records.n_events == 2443
    assert [g.dur for g in small.records.gpu] == [g.dur for g in whole.records.gpu]


def test_stdin(tmp_path):
    data = gzip.compress(_doc())
    code = (
        "from perfreport.read import read_trace; r = read_trace('-'); "
        "print(r.source, r.records.n_events, len(r.records.gpu))"
    )
    out = subprocess.run([sys.executable, "-c", code], input=data, capture_output=True, check=True)
    assert out.stdout.decode().split() == ["<stdin>", "6", "1"]


_x, _tree = x_event, read_and_build


def test_tree_consumes_the_raw_trace(tmp_path):
    from perfreport.tree import build_tree

    raw, _ = _tree(tmp_path, [_x("cpu_op", "a", 0, 1)])
    with pytest.raises(ValueError, match="already consumed"):
        build_tree(raw)
