"""Splitter and scan: the same records for any chunking; the scan resumes anywhere (errors:
tests/read/test_diagnose.py)."""

from __future__ import annotations


import pytest

import perfreport.read.source as source
from perfreport.read import read_trace
from perfreport.read.scan import Scan
from tests.read.kit import nasty_doc as _nasty_doc


@pytest.mark.parametrize("chunk", [4, 5, 7, 37, 4096, 1 << 20])
def test_any_chunking_gives_the_same_records(tmp_path, monkeypatch, chunk):
    p = tmp_path / "t.json"
    p.write_bytes(_nasty_doc())
    ref = read_trace(str(p))
    monkeypatch.setattr(source, "CHUNK", chunk)
    got = read_trace(str(p))
    assert got.records.n_events == ref.records.n_events == 80
    assert [o.name for o in got.records.cpu] == [o.name for o in ref.records.cpu]
    assert (
        got.records.cpu[3].args == ref.records.cpu[3].args == {"nested": {"a": {"b": [1, {"c": "},"}]}}, "s": "\\\\\\"}
    )
    assert [g.dur for g in got.records.gpu] == [2.0] * 40
    assert got.meta == ref.meta and got.meta["traceName"] == "]}"


def test_scan_resumes_anywhere():
    """Feeding the scan one byte at a time finds the same boundaries as one pass."""
    body = _nasty_doc()
    body = body[body.index(b"[", body.index(b'"traceEvents"')) + 1 :]
    whole = Scan(0)
    whole.run(body)
    buf = bytearray()
    inc = Scan(0)
    for b in body:
        buf.append(b)
        inc.run(buf)
        if inc.end >= 0:
            break
    assert (inc.count, inc.last, inc.end) == (whole.count, whole.last, whole.end) == (80, whole.last, whole.end)
    assert body[whole.end : whole.end + 1] == b"]"
