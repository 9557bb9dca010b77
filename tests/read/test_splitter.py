"""Splitter and scan: same result for any chunking, errors found in one pass (issue 10)."""
from __future__ import annotations

import json
import time

import pytest

import perfreport.read.source as source
from perfreport.errors import BadInput
from perfreport.read import read_trace
from perfreport.read.scan import Scan


def _nasty_doc() -> bytes:
    """Strings holding '},' and '"]', escaped quotes and backslashes, nested args objects."""
    ev = []
    for i in range(40):
        ev.append({"ph": "X", "cat": "cpu_op", "name": f'op }},{{ "]\\\\ \\" {i} é',
                   "pid": 1, "tid": 1, "ts": 10.0 * i, "dur": 5.0,
                   "args": {"External id": i, "nested": {"a": {"b": [1, {"c": "},"}]}}, "s": "\\" * (i % 4)}})
        ev.append({"ph": "X", "cat": "kernel", "name": f"k{i}\\", "pid": 0, "tid": 7, "ts": 10.0 * i + 1,
                   "dur": 2.0, "args": {"device": 0, "stream": 7, "correlation": i}})
    return json.dumps({"metadata": {"x": [{"y": "},"}]}, "traceEvents": ev,
                       "deviceProperties": [{"name": "NVIDIA H100 80GB HBM3"}], "traceName": "]}"},
                      indent=1).encode()


@pytest.mark.parametrize("chunk", [4, 5, 7, 37, 4096, 1 << 20])
def test_any_chunking_gives_the_same_records(tmp_path, monkeypatch, chunk):
    p = tmp_path / "t.json"
    p.write_bytes(_nasty_doc())
    ref = read_trace(str(p))
    monkeypatch.setattr(source, "CHUNK", chunk)
    got = read_trace(str(p))
    assert got.records.n_events == ref.records.n_events == 80
    assert [o.name for o in got.records.cpu] == [o.name for o in ref.records.cpu]
    assert got.records.cpu[3].args == ref.records.cpu[3].args == {
        "nested": {"a": {"b": [1, {"c": "},"}]}}, "s": "\\\\\\"}
    assert [g.dur for g in got.records.gpu] == [2.0] * 40
    assert got.meta == ref.meta and got.meta["traceName"] == "]}"


@pytest.mark.parametrize("chunk", [4, 13, 4096, 1 << 20])
def test_error_offset_does_not_depend_on_chunking(tmp_path, monkeypatch, chunk):
    data = _nasty_doc()
    i = data.index(b'"ph": "X"', 2000)           # inside an event, after some whole ones
    bad = data[:i] + b"," + data[i:]              # '{\n  ,"ph"': a comma where a key must be
    p = tmp_path / "t.json"
    p.write_bytes(bad)
    monkeypatch.setattr(source, "CHUNK", chunk)
    with pytest.raises(BadInput) as e:
        read_trace(str(p))
    idx = data[:i].count(b'"ph"')                 # events that start before the bad byte
    assert f"at byte {i} (in traceEvents[{idx}])" in str(e.value)


def test_scan_resumes_anywhere():
    """Feeding the scan one byte at a time finds the same boundaries as one pass."""
    body = _nasty_doc()
    body = body[body.index(b"[", body.index(b'"traceEvents"')) + 1:]
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
    assert body[whole.end:whole.end + 1] == b"]"


def _big_trace(n_events: int) -> bytes:
    tmpl = ('{"ph": "X", "cat": "kernel", "name": "void gemm_kernel<128, 64>(float*, float const*)", '
            '"pid": 0, "tid": 7, "ts": %d.5, "dur": 3.25, "args": {"device": 0, "stream": 7, '
            '"correlation": %d, "External id": %d, "grid": [128, 4, 1], "block": [256, 1, 1]}}')
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
    i = data.index(b"}}", 5000) + 2              # the end of an event
    early = tmp_path / "early.json"
    early.write_bytes(data[:i] + b"," + data[i:])  # ",," between two events
    broken = tmp_path / "broken.json"
    broken.write_bytes(data[:i - 1] + b",," + data[i:])   # the event's '}' replaced: unbalanced
    j = data.index(b"gemm_kernel", 5000)
    utf8 = tmp_path / "utf8.json"
    utf8.write_bytes(data[:j] + b"\xff" + data[j + 1:])
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
