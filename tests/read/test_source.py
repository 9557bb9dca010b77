"""read/source.py: a path, a gzip path (by magic bytes), a stream; every problem one BadInput naming the input."""

from __future__ import annotations

import gzip
import io
import os

import pytest

from perfreport.errors import BadInput
from perfreport.read.source import CHUNK, Source


def _read(src, progress=None):
    # each chunk copied as it comes: a chunk may be a view the next one overwrites
    return b"".join([bytes(c) for c in src.chunks(progress)])


def test_plain_json_is_read_in_chunks_with_progress(tmp_path):
    p = tmp_path / "t.json"
    body = b"[" + b" " * (CHUNK + 10) + b"]"
    p.write_bytes(body)
    seen = []
    src = Source(str(p))
    assert src.size == len(body) and src.name == str(p)
    assert _read(src, seen.append) == body
    assert src.gzip is False
    assert seen[-1] == len(body) and seen == sorted(seen) and len(seen) == 2


def test_chunks_after_the_first_reuse_one_buffer_and_read_every_byte(tmp_path):
    """A plain file's chunks after the first are views of one buffer (the same pages each
    read: no new mmap per chunk); copied as they come, they are the file, and the hash is its."""
    import hashlib

    p = tmp_path / "t.json"
    body = bytes(range(251)) * ((3 * CHUNK) // 251 + 7)  # four chunks, every one different
    p.write_bytes(body)
    src = Source(str(p))
    views, copies = [], []
    for c in src.chunks():
        views.append(c)
        copies.append(bytes(c))
    assert b"".join(copies) == body and src.sha256 == hashlib.sha256(body).hexdigest()
    assert len(views) == 4 and isinstance(views[0], bytes)
    assert all(isinstance(v, memoryview) for v in views[1:])
    assert len({id(v.obj) for v in views[1:]}) == 1  # one buffer under them all
    assert bytes(views[1]) != copies[1]  # overwritten by the last read: why consumers copy


def test_a_stream_without_readinto_is_read_by_read():
    class Plain:
        def __init__(self, data):
            self.f = io.BytesIO(data)

        def read(self, n=-1):
            return self.f.read(n)

    body = b"x" * (2 * CHUNK + 5)
    assert _read(Source(Plain(body))) == body


def test_gzip_is_found_by_its_magic_bytes_not_its_name(tmp_path):
    p = tmp_path / "trace.json"  # no .gz in the name
    p.write_bytes(gzip.compress(b'{"traceEvents": []}'))
    src = Source(str(p))
    assert _read(src) == b'{"traceEvents": []}'
    assert src.gzip is True


def test_concatenated_gzip_members_are_all_read(tmp_path):
    p = tmp_path / "t.gz"
    p.write_bytes(gzip.compress(b"abc") + gzip.compress(b"def"))
    assert _read(Source(str(p))) == b"abcdef"


def test_a_binary_stream_is_accepted_and_named():
    s = io.BytesIO(b"[1]")
    src = Source(s)
    assert src.size is None and src.name == "<stream>"
    assert _read(src) == b"[1]"
    assert not s.closed


@pytest.mark.parametrize(
    ("make", "problem"),
    [
        (lambda p: None, "no such file"),
        (lambda p: p.mkdir(), "is a directory, not a trace file"),
        (lambda p: p.write_bytes(b""), "file is empty"),
    ],
)
def test_bad_paths_are_refused_when_opened(tmp_path, make, problem):
    p = tmp_path / "x.json"
    make(p)
    with pytest.raises(BadInput) as e:
        Source(str(p))
    assert e.value.problem == problem and e.value.source == str(p)


def test_corrupt_and_truncated_gzip(tmp_path):
    data = gzip.compress(os.urandom(2000))
    cut = tmp_path / "cut.gz"
    cut.write_bytes(data[: len(data) // 2])
    with pytest.raises(BadInput, match="truncated gzip file"):
        _read(Source(str(cut)))
    bad = tmp_path / "bad.gz"
    bad.write_bytes(data[:10] + b"\xff" * 50)
    with pytest.raises(BadInput, match="corrupt gzip data"):
        _read(Source(str(bad)))


def test_an_empty_stream_is_refused():
    with pytest.raises(BadInput, match="input is empty"):
        _read(Source(io.BytesIO(b"")))
