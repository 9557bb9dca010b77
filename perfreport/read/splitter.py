"""Byte-level splitter: turn a stream of JSON bytes into batches of ``traceEvents``.

The document is never parsed whole. We find the ``"traceEvents": [`` key, then cut the
byte stream after an event's closing ``}`` (a ``}`` followed by ``,``) and decode each
batch ``[ev, ev, ...]`` with msgspec into typed records. A cut that falls inside a nested
object or a string makes the batch invalid JSON; the decoder refuses it and we retry with
an earlier cut, so a successful decode always ends on a true event boundary (JSON parsing
is deterministic from the batch start, which is itself a boundary).

The bytes before and after the array are kept and decoded as the top-level metadata
(``deviceProperties``, ``distributedInfo``, ``baseTimeNanoseconds`` ...), whatever the key
order.
"""
from __future__ import annotations

import json
import re
from typing import Iterable, Iterator

import msgspec

from perfreport.errors import BadInput

_TE_KEY = re.compile(rb'"traceEvents"\s*:\s*\[')
_TRAILING = re.compile(r"\(byte (\d+)\)")
_MAX_PREFIX = 512 << 20


class Split:
    """Result holder: ``meta`` is filled once the stream is exhausted."""

    def __init__(self) -> None:
        self.meta: dict = {}
        self.n_batches = 0


def _last_cut(buf: bytes, end: int) -> int:
    """Index just after the last ``}`` before ``end`` that is followed by optional space and ``,``."""
    while True:
        i = buf.rfind(b"}", 0, end)
        if i < 0:
            return -1
        j = i + 1
        n = len(buf)
        while j < n and buf[j] in b" \t\r\n":
            j += 1
        if j < n and buf[j] == 0x2C:  # ','
            return i + 1
        end = i


def iter_batches(chunks: Iterable[bytes], decoder: msgspec.json.Decoder, source: str,
                 split: Split) -> Iterator[list]:
    """Yield lists of decoded events; fill ``split.meta`` at the end."""
    it = iter(chunks)
    buf = b""
    prefix = None
    for chunk in it:
        buf += chunk
        m = _TE_KEY.search(buf)
        if m:
            prefix = buf[:m.start()]
            buf = buf[m.end():]
            break
        if len(buf) > _MAX_PREFIX:
            raise BadInput(source, "no traceEvents array in the first 512 MB")
    if prefix is None:
        _no_trace_events(buf, source)

    # A bytearray consumed from the front (``del buf[:pos]`` moves a start offset) and grown
    # in place: with big blocks mmapped (perfreport.read.heap) a new bytes object per chunk
    # would cost fresh pages each time. Each batch is copied once, into ``[events]``.
    buf = bytearray(buf)
    pos = 0  # start of undecoded events in buf (after a boundary, maybe a leading ',')
    for chunk in it:
        if pos:
            del buf[:pos]
            pos = 0
        buf += chunk
        end = len(buf)
        while True:
            cut = _last_cut(buf, end)
            if cut <= pos:
                break  # no complete event yet: read more
            start = _skip_comma(buf, pos, cut)
            with memoryview(buf) as mv:
                doc = b"".join((b"[", mv[start:cut], b"]"))
            try:
                events = decoder.decode(doc)
            except msgspec.ValidationError as exc:
                raise BadInput(source, f"malformed trace event: {exc}") from None
            except msgspec.DecodeError:
                end = cut - 1          # cut was inside a nested value or string
                continue
            split.n_batches += 1
            yield events
            pos = cut
            break
    # end of stream: buf[pos:] = remaining events + ']' + rest of the top-level object
    tail = _lstrip_comma(bytes(buf[pos:]))
    del buf
    events, suffix = _decode_tail(tail, decoder, source)
    if events:
        split.n_batches += 1
        yield events
    split.meta = _decode_meta(prefix, suffix, source)


def _skip_comma(buf, i: int, end: int) -> int:
    """Index of the first byte of ``buf[i:end]`` after leading whitespace and one comma
    (what :func:`_lstrip_comma` leaves)."""
    while i < end and buf[i] in b" \t\n\r\x0b\x0c":
        i += 1
    if i < end and buf[i] == 0x2C:
        i += 1
    return i


def _lstrip_comma(b: bytes) -> bytes:
    b = b.lstrip()
    if b[:1] == b",":
        b = b[1:]
    return b


def _decode_tail(tail: bytes, decoder, source: str) -> tuple[list, bytes]:
    """Split ``events ] suffix`` into decoded events and the suffix after ``]``."""
    stripped = tail.lstrip()
    if stripped[:1] == b"]":
        return [], stripped[1:]
    wrapped = b"[" + tail
    try:
        decoder.decode(wrapped)
    except msgspec.ValidationError as exc:
        raise BadInput(source, f"malformed trace event: {exc}") from None
    except msgspec.DecodeError as exc:
        m = _TRAILING.search(str(exc))
        if "trailing characters" in str(exc) and m:
            k = wrapped.rfind(b"]", 0, int(m.group(1)) + 1)
            if k > 0:
                try:
                    return decoder.decode(wrapped[:k + 1]), wrapped[k + 1:]
                except msgspec.DecodeError:
                    pass
        return _decode_tail_slow(tail, decoder, source)
    raise BadInput(source, "truncated JSON: the traceEvents array is not closed")


def _decode_tail_slow(tail: bytes, decoder, source: str) -> tuple[list, bytes]:
    """Fallback: find the end of the array with the standard library's raw decoder."""
    text = tail.decode("utf-8", errors="replace")
    dec = json.JSONDecoder()
    i, n = 0, len(text)
    while True:
        while i < n and text[i] in " \t\r\n,":
            i += 1
        if i >= n:
            raise BadInput(source, "truncated JSON: the traceEvents array is not closed")
        if text[i] == "]":
            break
        try:
            _, i = dec.raw_decode(text, i)
        except json.JSONDecodeError as exc:
            raise BadInput(source, f"invalid JSON in traceEvents near the end ({exc.msg})") from None
    head = text[:i].encode()
    events = decoder.decode(b"[" + _lstrip_comma(head).rstrip().rstrip(b",") + b"]")
    return events, text[i + 1:].encode()


def _decode_meta(prefix: bytes, suffix: bytes, source: str) -> dict:
    doc = prefix + b'"traceEvents": []' + suffix
    try:
        meta = msgspec.json.decode(doc)
    except msgspec.DecodeError:
        raise BadInput(source, "invalid JSON outside the traceEvents array (truncated file?)") from None
    if not isinstance(meta, dict):
        raise BadInput(source, "top-level JSON value is not an object")
    meta.pop("traceEvents", None)
    return meta


def _no_trace_events(buf: bytes, source: str):
    try:
        doc = msgspec.json.decode(buf)
    except msgspec.DecodeError:
        raise BadInput(source, "not JSON (or truncated): no traceEvents array found") from None
    if isinstance(doc, list):
        raise BadInput(source, "JSON array at top level; expected a Kineto trace object with traceEvents")
    raise BadInput(source, "JSON has no traceEvents array (not a PyTorch profiler trace)")


