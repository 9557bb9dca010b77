"""Byte-level splitter: turn a stream of JSON bytes into batches of ``traceEvents``.

The document is never parsed whole. The top-level ``"traceEvents": [`` key is found by a
string-aware scan of the object's first level (:mod:`perfreport.read.envelope`). Then the fast path cuts the byte stream after the last ``}`` followed
by ``,`` and offers the batch's bytes to ``direct`` (the C loop's
:meth:`~perfreport.read.kineto.Collector.add_doc`, which may take them whole, take the whole
events before where it failed, or decline), else decodes the batch ``[ev, ev, ...]`` with msgspec
into typed records. If that
decode fails (the cut fell inside a nested object or a string, past the array's end, or
the bytes are bad) the resumable :class:`~perfreport.read.scan.Scan` finds the true event
boundaries in one forward pass, and the batch up to the last one is decoded once more:
an error *now* is a real one, reported with its byte offset and event index
(:mod:`perfreport.read.diagnose`). Every byte
is looked at a bounded number of times, so any error costs time linear in the bytes
before it (the old splitter retried every earlier cut: minutes on a 50 MB file).

The bytes before and after the array are kept and decoded as the top-level metadata
(``deviceProperties``, ``distributedInfo``, ``baseTimeNanoseconds`` ...; also
:mod:`perfreport.read.envelope`), whatever the key order. Limits (each ends the read with one line naming the offset): see ``MAX_*``.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Iterable, Iterator

import msgspec

from perfreport.errors import BadInput
from perfreport.read import repair
from perfreport.read.diagnose import ERR_AT, Diagnose
from perfreport.read.envelope import MAX_PREFIX, ArrayEnvelope, MiB, mib
from perfreport.read.scan import Scan, ScanError

MAX_EVENT = 64 * MiB  # one event, or the blanks between two events
MAX_SUFFIX = 64 * MiB  # bytes after the array's closing ]
SLOW_AFTER = 4 * MiB  # undecoded bytes with no fast cut before the scanner takes over

_WS_COMMA = re.compile(rb"[ \t\r\n]*,")
_WS = re.compile(rb"[ \t\r\n]*")


class Split:
    """Result holder: ``meta`` is filled once the stream is exhausted; ``repairs`` counts
    what :mod:`perfreport.read.repair` fixed, ``first_repair`` the event index of the first."""

    def __init__(self) -> None:
        self.meta: dict = {}
        self.n_events = 0
        self.repairs: Counter = Counter()
        self.first_repair: tuple[int, int] | None = None  # (event index, byte offset)

    def warnings(self) -> list[str]:
        out = repair.lines(self.repairs)
        if out and self.first_repair is not None:
            i, at = self.first_repair
            out[0] += f" (the first in traceEvents[{i}], at byte {at})"
        return out


class _Splitter(ArrayEnvelope, Diagnose):
    """The fast path and the scan over the array (see the module docstring); finding the array
    and decoding the metadata: :class:`~perfreport.read.envelope.ArrayEnvelope`; error
    messages and repairs: :class:`~perfreport.read.diagnose.Diagnose`."""

    def __init__(self, decoder, source: str, split: Split, direct=None):
        self.decoder = decoder
        self.direct = direct
        self.source = source
        self.split = split
        self.buf = bytearray()
        self.base = 0  # absolute offset of buf[0]
        self.pos = 0  # start of undecoded events (a boundary)
        self.scan: Scan | None = None
        self.end = -1  # index in buf of the array's ']' once found

    def fail(self, problem: str):
        raise BadInput(self.source, problem)

    # -- the prefix: find the top-level "traceEvents": [ --------------------------------------
    def run(self, chunks: Iterable[bytes]) -> Iterator[list]:
        it = iter(chunks)
        prefix = self.find_array(it)
        buf = self.buf
        yield from self.advance(final=False)
        for chunk in it:
            pos = self.pos
            if pos:
                del buf[:pos]
                self.base += pos
                self.pos = 0
                if self.scan is not None:
                    self.scan.shift(pos)
                if self.end >= 0:
                    self.end -= pos
            buf += chunk
            if self.end >= 0:
                if len(buf) - self.end > MAX_SUFFIX:
                    self.fail(
                        f"more than {mib(MAX_SUFFIX)} after the traceEvents array "
                        f"(which ends at byte {self.base + self.end})"
                    )
                continue
            yield from self.advance(final=False)
        if self.end < 0:
            yield from self.advance(final=True)
        suffix = bytes(buf[self.end + 1 :])
        end_abs = self.base + self.end
        del buf[:]
        self.split.meta = self.decode_meta(prefix, suffix, end_abs)

    def advance(self, final: bool) -> Iterator[list]:
        buf, pos = self.buf, self.pos
        if self.scan is None:
            cut = _last_cut(buf, pos, len(buf))
            tries = 0
            while cut > pos:
                events = self.decode(pos, cut, fast=True)
                if isinstance(events, list):
                    self.pos = pos = cut
                    if events is not _TAKEN:
                        yield events
                    if not final:
                        return
                    break
                if isinstance(events, int):  # direct took the whole events before this offset:
                    self.pos = pos = events  # what it failed on, up to the cut, decoded as before
                    continue
                if events is _RETRY and tries < FAST_RETRIES:
                    tries += 1  # the cut was inside a nested object or a string
                    cut = _last_cut(buf, pos, cut - 1)
                    continue
                self.scan = Scan(pos)
                break
            else:
                if not final and len(buf) - pos <= SLOW_AFTER:
                    return
            if self.scan is None:
                self.scan = Scan(pos)
        sc = self.scan
        try:
            sc.run(buf)
        except ScanError as exc:
            n = self.split.n_events + sc.count
            where = (
                f"in traceEvents[{n}]"
                if sc.ev_start >= 0
                else f"after traceEvents[{n - 1}]"
                if n
                else "before traceEvents[0]"
            )
            self.fail(f"invalid JSON at byte {self.base + exc.index} ({where}): {exc.problem}")
        progressed = sc.last > pos
        if progressed:
            events = self.decode(pos, sc.last, fast=False)
            self.pos = pos = sc.last
            if events is not _TAKEN:
                yield events
        if sc.end >= 0:
            self.end = sc.end
            self.scan = None
            return
        if progressed and not final:
            # back to the fast path: what is left is one partial event, rescanned at most
            # once more; an event longer than the buffer keeps its resumable scan instead
            self.scan = None
        if final:
            n = self.split.n_events
            if sc.ev_start >= 0:
                self.fail(
                    f"truncated JSON: the input ends inside traceEvents[{n}] "
                    f"(which starts at byte {self.base + sc.ev_start})"
                )
            self.fail(
                f"truncated JSON: the traceEvents array is not closed (the input ends after traceEvents[{n - 1}])"
                if n
                else "truncated JSON: the traceEvents array is not closed"
            )
        if len(buf) - pos > MAX_EVENT:
            n = self.split.n_events
            if sc.ev_start >= 0:
                self.fail(
                    f"traceEvents[{n}] (from byte {self.base + sc.ev_start}) is longer "
                    f"than {mib(MAX_EVENT)}, the limit for one event"
                )
            self.fail(f"more than {mib(MAX_EVENT)} of blanks after byte {self.base + pos} with no event")

    def decode(self, pos: int, cut: int, fast: bool):
        """Events of ``buf[pos:cut]`` (a list; ``_TAKEN`` when ``direct`` took them; with ``fast``,
        an offset into ``buf`` when it took only the whole events before it, which is then a
        true boundary). With ``fast`` (the cut may be wrong): ``_RETRY`` when
        the error says the cut was (an earlier cut may do), ``_SLOW`` when the scan must
        decide (the array ended, or bytes to repair); a structural error before the cut is
        real whatever the cut, and is reported at once."""
        buf = self.buf
        start = _skip_comma(buf, pos, cut)
        with memoryview(buf) as mv:
            if self.direct is not None:
                body = mv[start:cut]
                try:
                    n = self.direct(body, partial=fast)
                finally:
                    body.release()
                if isinstance(n, tuple):  # (fast) the whole events before body[stop:] taken
                    self.split.n_events += n[0]
                    return start + n[1]
                if n is not None:  # taken whole from the bytes (Collector.add_doc): nothing to yield
                    self.split.n_events += n
                    return _TAKEN
            doc = b"".join((b"[", mv[start:cut], b"]"))
        try:
            events = self.decoder.decode(doc)
        except msgspec.ValidationError as exc:
            self.invalid(doc, start, exc)
        except (msgspec.DecodeError, RecursionError) as exc:
            if fast:
                verdict = _fast_verdict(doc, exc)
                if verdict is not None:
                    return verdict
                self.syntax(doc, start, exc)
            events = self.repaired(doc, start, exc)
        self.split.n_events += len(events)
        return events


_RETRY, _SLOW = object(), object()
_TAKEN: list = []  # decode's answer when ``direct`` took the batch (never yielded)
FAST_RETRIES = 8  # earlier cuts tried (one C decode each) before the Python scan
_NONFINITE_AT = (b"NaN", b"Inf", b"-In")


def _fast_verdict(doc: bytes, exc: Exception):
    """What a failed fast decode means: ``_RETRY``, ``_SLOW``, or None (a real error)."""
    if isinstance(exc, RecursionError):
        return _SLOW
    msg = str(exc)
    m = ERR_AT.search(msg)
    if m is None:  # "truncated" (a cut inside a string), bad UTF-8
        return _RETRY if "truncated" in msg else _SLOW
    k = int(m.group(1))
    if k >= len(doc) - 1:  # at the ']' we appended: the cut was inside a value
        return _RETRY
    if "trailing characters" in msg or "surrogate" in msg or doc[k : k + 3] in _NONFINITE_AT:
        return _SLOW  # the array ended before the cut / something to repair
    return None


def iter_batches(
    chunks: Iterable[bytes], decoder: msgspec.json.Decoder, source: str, split: Split, direct=None
) -> Iterator[list]:
    """Yield lists of decoded events; fill ``split.meta`` at the end. ``direct(items, partial)``,
    when given, is offered each batch's bytes first (a memoryview of the array's items
    ``ev, ev``, valid during the call): it returns the number of events it took, or None to have
    the batch decoded and yielded as before, or, when ``partial`` (a fast cut, which may have
    fallen inside an event), ``(events, stop)``: it took the whole events of ``items[:stop]``
    (:meth:`perfreport.read.kineto.Collector.add_doc`)."""
    return _Splitter(decoder, source, split, direct).run(chunks)


def _last_cut(buf, lo: int, end: int) -> int:
    """Index just after the last ``}`` in ``buf[lo:end]`` followed by blanks and ``,``."""
    match = _WS_COMMA.match
    while True:
        i = buf.rfind(b"}", lo, end)
        if i < 0:
            return -1
        if match(buf, i + 1):
            return i + 1
        end = i


def _skip_comma(buf, i: int, end: int) -> int:
    """Index of the first byte of ``buf[i:end]`` after leading blanks and one comma."""
    i = _WS.match(buf, i, end).end()
    if i < end and buf[i] == 0x2C:
        i += 1
    return i


__all__ = ["Split", "iter_batches", "MAX_PREFIX", "MAX_EVENT", "MAX_SUFFIX"]
