"""Splitter errors (perfreport/read/diagnose.py): the byte offset and event index do not
depend on chunking, and an early error costs less than a clean read (issue 10)."""

from __future__ import annotations

import time

import pytest

import perfreport.read.source as source
from perfreport.errors import BadInput
from perfreport.read import read_trace
from tests.read.kit import nasty_doc as _nasty_doc


@pytest.mark.parametrize("chunk", [4, 13, 4096, 1 << 20])
def test_error_offset_does_not_depend_on_chunking(tmp_path, monkeypatch, chunk):
    data = _nasty_doc()
    i = data.index(b'"ph": "X"', 2000)  # inside an event, after some whole ones
    bad = data[:i] + b"," + data[i:]  # '{\n  ,"ph"': a comma where a key must be
    p = tmp_path / "t.json"
    p.write_bytes(bad)
    monkeypatch.setattr(source, "CHUNK", chunk)
    with pytest.raises(BadInput) as e:
        read_trace(str(p))
    idx = data[:i].count(b'"ph"')  # events that start before the bad byte
    assert f"at byte {i} (in traceEvents[{idx}])" in str(e.value)


def _big_trace(n_events: int) -> bytes:
    tmpl = (
        '{"ph": "X", "cat": "kernel", "name": "void gemm_kernel<128, 64>(float*, float const*)", '
        '"pid": 0, "tid": 7, "ts": %d.5, "dur": 3.25, "args": {"device": 0, "stream": 7, '
        '"correlation": %d, "External id": %d, "grid": [128, 4, 1], "block": [256, 1, 1]}}'
    )
    body = ",\n".join(tmpl % (i, i, i) for i in range(n_events))
    return ('{"schemaVersion": 1, "traceEvents": [\n' + body + '\n], "traceName": "big"}').encode()


def _time(path):
    """(seconds, the RawTrace or the BadInput raised)."""
    t0 = time.perf_counter()
    try:
        out = read_trace(str(path))
    except BadInput as exc:
        out = exc
    return time.perf_counter() - t0, out


def test_early_error_in_50mb_costs_less_than_a_clean_read(tmp_path):
    """Issue 10: an early syntax error is reported in under 2x the time of a clean parse (the old
    splitter retried every earlier cut: minutes). Also an unbalanced event and an invalid UTF-8
    byte (repaired, so the whole file is read)."""
    data = _big_trace(200_000)
    assert len(data) > 50_000_000
    clean = tmp_path / "clean.json"
    clean.write_bytes(data)
    i = data.index(b"}}", 5000) + 2  # the end of an event
    early = tmp_path / "early.json"
    early.write_bytes(data[:i] + b"," + data[i:])  # ",," between two events
    broken = tmp_path / "broken.json"
    broken.write_bytes(data[: i - 1] + b",," + data[i:])  # the event's '}' replaced: unbalanced
    j = data.index(b"gemm_kernel", 5000)
    utf8 = tmp_path / "utf8.json"
    utf8.write_bytes(data[:j] + b"\xff" + data[j + 1 :])
    t_clean = min(_time(clean)[0], _time(clean)[0])
    t, err = _time(early)
    assert isinstance(err, BadInput) and f"at byte {i + 1} (after traceEvents[" in str(err)
    assert t < 2 * t_clean
    t, err = _time(broken)
    assert isinstance(err, BadInput) and f"at byte {i} (in traceEvents[" in str(err)
    assert t < 2 * t_clean
    t, raw = _time(utf8)
    assert raw.records.n_gpu == 200_000 and "1 invalid UTF-8" in raw.warnings[0]
    assert t < 2 * t_clean
