"""Open a trace input as a stream of byte chunks.

Accepts a path to ``.json`` or gzip-compressed JSON (detected by the magic bytes
``1f 8b``, not by the name) or ``-`` for standard input. Problems become
:class:`~perfreport.errors.BadInput` with one line naming the input.
"""

from __future__ import annotations

import errno
import hashlib
import os
import stat
import sys
import zlib
from typing import BinaryIO, Callable, Iterator

from perfreport.errors import BadInput

CHUNK = 1 << 20
GZIP_MAGIC = b"\x1f\x8b"


class Source:
    """A trace input: ``name`` for messages, ``size`` in bytes on disk (None for stdin);
    after :meth:`chunks` has run to the end, :attr:`sha256` is the hex SHA-256 of the bytes
    read (the file as stored: compressed for a gzip file), for the report's notes."""

    def __init__(self, spec):
        self.stream: BinaryIO | None = None
        if hasattr(spec, "read"):  # a binary file object (Python API)
            self.stream, spec = spec, "-"
            self.name = str(getattr(self.stream, "name", "<stream>"))
        else:
            self.name = "<stdin>" if spec == "-" else spec
        self.spec = spec
        self.size: int | None = None  # None: a stream (stdin, FIFO, process substitution)
        self.gzip = False
        self._hash = hashlib.sha256()
        self.sha256: str | None = None
        if spec != "-":
            try:
                st = os.stat(spec)
            except OSError as exc:
                raise BadInput(spec, _why(exc)) from None
            if stat.S_ISDIR(st.st_mode):
                raise BadInput(spec, "is a directory, not a trace file")
            if stat.S_ISREG(st.st_mode):
                self.size = st.st_size
                if self.size == 0:
                    raise BadInput(spec, "file is empty")
            elif not (stat.S_ISFIFO(st.st_mode) or stat.S_ISCHR(st.st_mode) or stat.S_ISSOCK(st.st_mode)):
                raise BadInput(spec, "is not a regular file or a stream")

    def chunks(self, on_progress: Callable[[int], None] | None = None) -> Iterator[bytes]:
        """Decompressed chunks. ``on_progress(n)`` gets the raw bytes consumed so far.

        A chunk of an uncompressed input is a view of one buffer that the next chunk
        overwrites (the splitter copies each chunk into its own buffer at once): so the file's
        bytes land in the same pages each time, where a new 1 MiB ``bytes`` per read is a
        fresh mmap that the kernel faults in and zeroes (~1/3 of the read's page faults and
        of its system time: docs/benchmarks.md, "Session 26: the read's page faults")."""
        yield from self._chunks(on_progress)
        self.sha256 = self._hash.hexdigest()

    def _read(self, raw: BinaryIO, n: int) -> bytes:
        b = raw.read(n)
        self._hash.update(b)
        return b

    def _reader(self, raw: BinaryIO) -> Callable[[], bytes | memoryview]:
        """A function giving the next ``CHUNK`` bytes of ``raw`` (hashed; empty at the end):
        read into one reused buffer where ``raw`` can (``readinto``), else new bytes."""
        into = getattr(raw, "readinto", None)
        if into is None:
            return lambda: self._read(raw, CHUNK)
        view = memoryview(bytearray(CHUNK))

        def read() -> memoryview:
            n = into(view)
            b = view[: n or 0]
            self._hash.update(b)
            return b

        return read

    def _chunks(self, on_progress) -> Iterator[bytes]:
        raw: BinaryIO
        try:
            if self.stream is not None:
                raw = self.stream
            else:
                raw = sys.stdin.buffer if self.spec == "-" else open(self.spec, "rb")
        except OSError as exc:
            raise BadInput(self.name, f"cannot open: {exc.strerror}") from None
        try:
            head = self._read(raw, 2)
            if not head:
                raise BadInput(self.name, "input is empty")
            if head == GZIP_MAGIC:
                yield from self._gunzip(raw, head, on_progress)
            else:
                first = head + self._read(raw, CHUNK)
                consumed = len(first)
                if on_progress:
                    on_progress(consumed)
                yield first
                read = self._reader(raw)
                while True:
                    b = read()
                    if not b:
                        break
                    consumed += len(b)
                    if on_progress:
                        on_progress(consumed)
                    yield b
        except OSError as exc:
            raise BadInput(self.name, f"read error: {exc}") from None
        finally:
            if raw is not sys.stdin.buffer and raw is not self.stream:
                raw.close()

    def _gunzip(self, raw: BinaryIO, head: bytes, on_progress) -> Iterator[bytes]:
        """Inflate gzip (concatenated members too) from the stream, ``CHUNK`` bytes of output
        at a time: a gzip bomb costs time, never memory (the splitter's limits end it)."""
        self.gzip = True
        d = zlib.decompressobj(47)  # wbits 32+15: gzip header and trailer
        consumed = len(head)
        data = head
        while True:
            b = self._read(raw, CHUNK // 4)
            consumed += len(b)
            data += b
            while True:
                try:
                    out = d.decompress(data, CHUNK)
                except zlib.error as exc:
                    raise BadInput(self.name, f"corrupt gzip data ({exc})") from None
                data = d.unconsumed_tail
                if d.eof:
                    rest = d.unused_data
                    data = b""
                    if rest.strip(b"\0"):  # another member follows
                        d = zlib.decompressobj(47)
                        data = rest
                if out:
                    yield out
                if not data and len(out) < CHUNK:
                    break
            if on_progress:
                on_progress(consumed)
            if not b:
                break
        if not d.eof:
            raise BadInput(self.name, "truncated gzip file (unexpected end of compressed data)")


def _why(exc: OSError) -> str:
    if exc.errno == errno.ENOENT:
        return "no such file"
    if exc.errno == errno.ELOOP:
        return "too many levels of symbolic links (a symlink loop?)"
    if exc.errno == errno.EACCES:
        return "permission denied"
    if exc.errno == errno.ENOTDIR:
        return "a part of the path is not a directory"
    return f"cannot read: {exc.strerror}"


__all__ = ["Source", "CHUNK"]
