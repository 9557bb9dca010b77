"""Open a trace input as a stream of byte chunks.

Accepts a path to ``.json`` or gzip-compressed JSON (detected by the magic bytes
``1f 8b``, not by the name) or ``-`` for standard input. Problems become
:class:`~perfreport.errors.BadInput` with one line naming the input.
"""
from __future__ import annotations

import os
import sys
import zlib
from typing import BinaryIO, Callable, Iterator

from perfreport.errors import BadInput

CHUNK = 1 << 20
GZIP_MAGIC = b"\x1f\x8b"


class Source:
    """A trace input: ``name`` for messages, ``size`` in bytes on disk (None for stdin)."""

    def __init__(self, spec):
        self.stream: BinaryIO | None = None
        if hasattr(spec, "read"):          # a binary file object (Python API)
            self.stream, spec = spec, "-"
            self.name = str(getattr(self.stream, "name", "<stream>"))
        else:
            self.name = "<stdin>" if spec == "-" else spec
        self.spec = spec
        self.size: int | None = None
        if spec != "-":
            if not os.path.exists(spec):
                raise BadInput(spec, "no such file")
            if os.path.isdir(spec):
                raise BadInput(spec, "is a directory, not a trace file")
            try:
                self.size = os.path.getsize(spec)
            except OSError as exc:
                raise BadInput(spec, f"cannot read: {exc.strerror}") from None
            if self.size == 0:
                raise BadInput(spec, "file is empty")

    def chunks(self, on_progress: Callable[[int], None] | None = None) -> Iterator[bytes]:
        """Decompressed chunks. ``on_progress(n)`` gets the raw bytes consumed so far."""
        raw: BinaryIO
        try:
            if self.stream is not None:
                raw = self.stream
            else:
                raw = sys.stdin.buffer if self.spec == "-" else open(self.spec, "rb")
        except OSError as exc:
            raise BadInput(self.name, f"cannot open: {exc.strerror}") from None
        try:
            head = raw.read(2)
            if not head:
                raise BadInput(self.name, "input is empty")
            if head == GZIP_MAGIC:
                yield from self._gunzip(raw, head, on_progress)
            else:
                first = head + raw.read(CHUNK)
                consumed = len(first)
                if on_progress:
                    on_progress(consumed)
                yield first
                while True:
                    b = raw.read(CHUNK)
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
        # zlib with wbits=47 (32+15) decodes gzip; concatenated members are handled too.
        d = zlib.decompressobj(47)
        consumed = 0
        pending = head
        while True:
            b = raw.read(CHUNK // 4)
            data = pending + b
            pending = b""
            if not data:
                break
            consumed += len(data)
            try:
                out = d.decompress(data)
                while d.eof and d.unused_data:        # next gzip member
                    rest = d.unused_data
                    d = zlib.decompressobj(47)
                    out += d.decompress(rest)
            except zlib.error as exc:
                raise BadInput(self.name, f"corrupt gzip data ({exc})") from None
            if on_progress:
                on_progress(consumed)
            if out:
                yield out
            if not b:
                break
        if not d.eof:
            raise BadInput(self.name, "truncated gzip file (unexpected end of compressed data)")
        tail = d.flush()
        if tail:
            yield tail


__all__ = ["Source", "CHUNK"]
