"""Splitter errors (perfreport/read/diagnose.py): the byte offset and event index do not
depend on chunking, and an early error costs a fraction of a clean read."""

from __future__ import annotations

import pytest

import perfreport.read.diagnose as diagnose
import perfreport.read.scan as scan
import perfreport.read.source as source
import perfreport.read.splitter as splitter
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


class _Work:
    """Bytes each kind of reading work touched: decoded by msgspec (a batch, or a retry at an
    earlier cut), scanned by the Python scanner, and walked by the diagnosis's event finder."""

    def __init__(self, monkeypatch):
        self.decoded = self.scanned = self.walked = 0
        decode, run, starts = splitter._Splitter.decode, scan.Scan.run, diagnose.event_starts

        def counted_decode(sp, pos, cut, fast):
            self.decoded += cut - pos
            return decode(sp, pos, cut, fast)

        def counted_run(sc, buf, stop=None):
            self.scanned += (len(buf) if stop is None else stop) - sc.i
            return run(sc, buf, stop)

        def counted_starts(buf, start, stop):
            self.walked += stop - start
            return starts(buf, start, stop)

        monkeypatch.setattr(splitter._Splitter, "decode", counted_decode)
        monkeypatch.setattr(scan.Scan, "run", counted_run)
        monkeypatch.setattr(diagnose, "event_starts", counted_starts)

    def read(self, path):
        """(work done, the RawTrace or the BadInput raised); the counters restart."""
        self.decoded = self.scanned = self.walked = 0
        try:
            out = read_trace(str(path))
        except BadInput as exc:
            out = exc
        return (self.decoded, self.scanned, self.walked), out


def test_early_error_costs_a_fraction_of_a_clean_read(tmp_path, monkeypatch):
    """An early syntax error is reported after reading a few batches, not the whole
    file, and a repaired byte costs one Python scan of its batch (the old splitter retried every
    earlier cut: minutes for an 8.6 MB trace). Counted in bytes of work, not timed: 40 batches of
    64 KiB; an unbalanced event and an invalid UTF-8 byte (repaired, so the whole file is read)."""
    monkeypatch.setattr(source, "CHUNK", 1 << 16)
    data = _big_trace(12_000)
    assert len(data) > 40 * (1 << 16)
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
    work = _Work(monkeypatch)
    (dec, scanned, walked), raw = work.read(clean)
    assert (
        raw.records.n_gpu == 12_000 and scanned + walked < 1000 and len(data) - 100 < dec <= len(data)
    )  # the scanner: the array's end
    batch = 1 << 16
    (dec, scanned, walked), err = work.read(early)
    assert isinstance(err, BadInput) and f"at byte {i + 1} (after traceEvents[" in str(err)
    # the first batch: its whole events before the error taken by the C loop (add_doc's partial
    # answer), the rest of it decoded once more from there and diagnosed once
    assert dec + scanned + walked <= 3 * batch
    (dec, scanned, walked), err = work.read(broken)
    assert isinstance(err, BadInput) and f"at byte {i} (in traceEvents[" in str(err)
    assert dec + scanned + walked <= (splitter.FAST_RETRIES + 3) * batch  # the retries of one batch, one scan
    (dec, scanned, walked), raw = work.read(utf8)
    assert raw.records.n_gpu == 12_000 and "1 invalid UTF-8" in raw.warnings[0]
    # Python work on the batch that holds the byte only: scanned (and its last partial event once
    # more), then walked to place the repair; every other batch takes the C decoder alone
    assert dec <= len(data) + 2 * batch and scanned + walked <= 4 * batch
