"""Byte-level splitter: turn a stream of JSON bytes into batches of ``traceEvents``.

The document is never parsed whole. The top-level ``"traceEvents": [`` key is found by a
string-aware scan of the object's first level (a ``traceEvents`` key nested in another
object is not it). Then the fast path cuts the byte stream after the last ``}`` followed
by ``,`` and decodes the batch ``[ev, ev, ...]`` with msgspec into typed records. If that
decode fails (the cut fell inside a nested object or a string, past the array's end, or
the bytes are bad) the resumable :class:`~perfreport.read.scan.Scan` finds the true event
boundaries in one forward pass, and the batch up to the last one is decoded once more:
an error *now* is a real one, reported with its byte offset and event index. Every byte
is looked at a bounded number of times, so any error costs time linear in the bytes
before it (the old splitter retried every earlier cut: minutes on a 50 MB file).

The bytes before and after the array are kept and decoded as the top-level metadata
(``deviceProperties``, ``distributedInfo``, ``baseTimeNanoseconds`` ...), whatever the key
order. Limits (each ends the read with one line naming the offset): see ``MAX_*``.
"""
from __future__ import annotations

import re
from collections import Counter
from typing import Iterable, Iterator

import msgspec

from perfreport.errors import BadInput
from perfreport.read import repair
from perfreport.read.scan import Scan, ScanError, event_spans, event_starts, resume_point, string_end

MiB = 1 << 20
MAX_PREFIX = 64 * MiB     # bytes before "traceEvents": [ (metadata keys written first)
MAX_EVENT = 64 * MiB      # one event, or the blanks between two events
MAX_SUFFIX = 64 * MiB     # bytes after the array's closing ]
SLOW_AFTER = 4 * MiB      # undecoded bytes with no fast cut before the scanner takes over
MAX_DEPTH_HINT = 900      # nesting the decoder follows (its recursion limit is ~1,000)

_WS_COMMA = re.compile(rb"[ \t\r\n]*,")
_WS = re.compile(rb"[ \t\r\n]*")
_TS_KEY = b'"traceEvents"'
_ERR_AT = re.compile(r"\(byte (\d+)\)")
_VAL_AT = re.compile(r"^(.*?)(?: - at `\$\[(\d+)\](.*)`)?$", re.S)


class Split:
    """Result holder: ``meta`` is filled once the stream is exhausted; ``repairs`` counts
    what :mod:`perfreport.read.repair` fixed, ``first_repair`` the event index of the first."""

    def __init__(self) -> None:
        self.meta: dict = {}
        self.n_batches = 0
        self.n_events = 0
        self.repairs: Counter = Counter()
        self.first_repair: tuple[int, int] | None = None     # (event index, byte offset)

    def warnings(self) -> list[str]:
        out = repair.lines(self.repairs)
        if out and self.first_repair is not None:
            i, at = self.first_repair
            out[0] += f" (the first in traceEvents[{i}], at byte {at})"
        return out


def _mib(n: int) -> str:
    return f"{n // MiB} MiB"


class _Splitter:
    def __init__(self, decoder, source: str, split: Split):
        self.decoder = decoder
        self.source = source
        self.split = split
        self.buf = bytearray()
        self.base = 0            # absolute offset of buf[0]
        self.pos = 0             # start of undecoded events (a boundary)
        self.scan: Scan | None = None
        self.end = -1            # index in buf of the array's ']' once found

    def fail(self, problem: str):
        raise BadInput(self.source, problem)

    # -- the prefix: find the top-level "traceEvents": [ --------------------------------------
    def find_array(self, it) -> bytes | None:
        buf = self.buf
        i = depth = 0
        floor = -1              # inside a string (resume index) when >= 0
        key_at = -1             # a depth-1 "traceEvents" string waiting for its ':' and '['
        key_scan, key_colon = 0, False
        started = False
        lead = -1
        for chunk in it:
            buf += chunk
            n = len(buf)
            if not started:
                if lead < 0:
                    if n < 3:
                        continue
                    lead = 3 if buf[:3] == b"\xef\xbb\xbf" else 0
                lead = j = _WS.match(buf, lead).end()     # resumed: blanks scanned once
                if j >= n:
                    if n > MAX_PREFIX:
                        self.fail(f"no JSON value in the first {_mib(MAX_PREFIX)} (only blanks)")
                    continue
                c = buf[j]
                if c == 0x5B:
                    self.fail("JSON array at top level; expected a Kineto trace object with traceEvents")
                if c != 0x7B:
                    self.fail(f"not JSON: starts with byte {bytes(buf[j:j + 1])!r} at offset {j} "
                              "(a Kineto trace is a JSON object)")
                started, i, depth = True, j + 1, 1
            while True:
                if key_at >= 0:
                    k = key_scan = _WS.match(buf, key_scan).end()
                    if k >= n:
                        break                       # need more bytes to decide
                    if not key_colon and buf[k] == 0x3A:       # ':'
                        key_colon, key_scan = True, k + 1
                        continue
                    if key_colon:
                        if buf[k] != 0x5B:
                            self.fail(f"traceEvents (byte {key_at}) is not an array")
                        prefix = bytes(buf[:key_at])
                        if prefix[:3] == b"\xef\xbb\xbf":        # a UTF-8 byte order mark
                            prefix = b"   " + prefix[3:]
                        del buf[:k + 1]
                        self.base = k + 1
                        return prefix
                    key_at = -1                      # a value "traceEvents", not the key
                if floor >= 0:
                    k = string_end(buf, i, floor)
                    if k < 0:
                        i = resume_point(buf, floor)
                        break
                    if depth == 1 and k - (floor - 1) == len(_TS_KEY) and buf[floor - 1:k] == _TS_KEY:
                        key_at, key_scan, key_colon = floor - 1, k, False
                    floor, i = -1, k
                    continue
                m = _BRACKETS.search(buf, i)
                if m is None:
                    i = n
                    break
                j = m.start()
                c = buf[j]
                i = j + 1
                if c == 0x22:
                    floor = j + 1
                elif c == 0x7B or c == 0x5B:
                    depth += 1
                else:
                    depth -= 1
                    if depth == 0:
                        self.fail("JSON has no traceEvents array (not a PyTorch profiler trace)")
            if n > MAX_PREFIX:
                self.fail(f"no top-level traceEvents array in the first {_mib(MAX_PREFIX)}")
        if not started:         # fewer than 3 bytes, or only blanks
            b = bytes(buf).strip()
            if not buf or not b:
                self.fail("input is empty" if not buf else "only blanks, no JSON value")
            if b[:1] == b"[":
                self.fail("JSON array at top level; expected a Kineto trace object with traceEvents")
            if b[:1] != b"{":
                self.fail(f"not JSON: starts with byte {b[:1]!r} (a Kineto trace is a JSON object)")
        self.fail("truncated JSON: the input ends before the traceEvents array"
                  if depth else "not JSON (or truncated): no traceEvents array found")

    # -- the array ---------------------------------------------------------------------------
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
                    self.fail(f"more than {_mib(MAX_SUFFIX)} after the traceEvents array "
                              f"(which ends at byte {self.base + self.end})")
                continue
            yield from self.advance(final=False)
        if self.end < 0:
            yield from self.advance(final=True)
        suffix = bytes(buf[self.end + 1:])
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
                    yield events
                    if not final:
                        return
                    break
                if events is _RETRY and tries < FAST_RETRIES:
                    tries += 1        # the cut was inside a nested object or a string
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
            where = (f"in traceEvents[{n}]" if sc.ev_start >= 0 else
                     f"after traceEvents[{n - 1}]" if n else "before traceEvents[0]")
            self.fail(f"invalid JSON at byte {self.base + exc.index} ({where}): {exc.problem}")
        progressed = sc.last > pos
        if progressed:
            events = self.decode(pos, sc.last, fast=False)
            self.pos = pos = sc.last
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
                self.fail(f"truncated JSON: the input ends inside traceEvents[{n}] "
                          f"(which starts at byte {self.base + sc.ev_start})")
            self.fail(f"truncated JSON: the traceEvents array is not closed "
                      f"(the input ends after traceEvents[{n - 1}])" if n else
                      "truncated JSON: the traceEvents array is not closed")
        if len(buf) - pos > MAX_EVENT:
            n = self.split.n_events
            if sc.ev_start >= 0:
                self.fail(f"traceEvents[{n}] (from byte {self.base + sc.ev_start}) is longer "
                          f"than {_mib(MAX_EVENT)}, the limit for one event")
            self.fail(f"more than {_mib(MAX_EVENT)} of blanks after byte {self.base + pos} "
                      "with no event")

    def decode(self, pos: int, cut: int, fast: bool):
        """Events of ``buf[pos:cut]``. With ``fast`` (the cut may be wrong): ``_RETRY`` when
        the error says the cut was (an earlier cut may do), ``_SLOW`` when the scan must
        decide (the array ended, or bytes to repair); a structural error before the cut is
        real whatever the cut, and is reported at once."""
        buf = self.buf
        start = _skip_comma(buf, pos, cut)
        with memoryview(buf) as mv:
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
        self.split.n_batches += 1
        self.split.n_events += len(events)
        return events

    def repaired(self, doc: bytes, start: int, exc: Exception) -> list:
        """``doc`` failed on true boundaries: repair what may be (or report the error)."""
        if isinstance(exc, RecursionError):
            self.too_deep(doc, start)
        before = sum(self.split.repairs.values())
        fixed = repair.repair(doc, self.split.repairs)
        if sum(self.split.repairs.values()) == before:
            self.syntax(doc, start, exc)
        try:
            events = self.decoder.decode(fixed)
        except msgspec.ValidationError as exc2:
            self.invalid(fixed, start, exc2, exact=False)
        except RecursionError:
            self.too_deep(doc, start)
        except msgspec.DecodeError as exc2:
            self.syntax(fixed, start, exc2, exact=False)
        if self.split.first_repair is None:
            k = _first_diff(doc, fixed)
            idx, _ = self._locate(doc, start, k)
            self.split.first_repair = (idx, self.base + start + k - 1)
        return events

    def _locate(self, doc: bytes, start: int, k: int) -> tuple[int, int]:
        """(event index, absolute offset of that event's first byte) of doc byte ``k``."""
        starts = event_starts(doc, 1, len(doc))
        idx = sum(1 for s in starts if s <= k) - 1
        first = starts[idx] if idx >= 0 else 1
        return self.split.n_events + max(idx, 0), self.base + start + first - 1

    def syntax(self, doc: bytes, start: int, exc: Exception, exact: bool = True):
        msg = str(exc)
        m = _ERR_AT.search(msg)
        k = int(m.group(1)) if m else len(doc) - 1
        what = _ERR_AT.sub("", msg).replace("JSON is malformed: ", "").strip()
        if what == "Input data was truncated":
            what = "unterminated string or value"
        starts, ends = event_spans(doc, 1, len(doc))
        i = sum(1 for s in starts if s <= k) - 1
        n = self.split.n_events
        if i < 0:
            where = f"before traceEvents[{n}]"
        elif i < len(ends) and k >= ends[i]:
            where = f"after traceEvents[{n + i}]"
        else:
            where = f"in traceEvents[{n + i}]"
        at = (f"at byte {self.base + start + k - 1}" if exact else
              f"in the event starting at byte {self.base + start + starts[max(i, 0)] - 1}" if starts else "")
        self.fail(f"invalid JSON {at} ({where}): {what}")

    def invalid(self, doc: bytes, start: int, exc: Exception, exact: bool = True):
        m = _VAL_AT.match(str(exc))
        what, i, path = m.group(1), m.group(2), m.group(3)
        if i is None:
            self.fail(f"malformed trace event: {what}")
        starts = event_starts(doc, 1, len(doc))
        i = int(i)
        at = self.base + start + starts[i] - 1 if i < len(starts) else None
        where = f" (at byte {at})" if at is not None else ""
        field = f" in {path.lstrip('.')}" if path else ""
        self.fail(f"malformed trace event traceEvents[{self.split.n_events + i}]{where}: "
                  f"{what}{field}")

    def too_deep(self, doc: bytes, start: int):
        k = _deepest(doc, MAX_DEPTH_HINT)
        idx = max(len(event_starts(doc, 1, k)) - 1, 0) if k >= 0 else 0
        near = f", near byte {self.base + start + k - 1}" if k >= 0 else ""
        self.fail(f"traceEvents[{self.split.n_events + idx}] is nested too deeply for the JSON "
                  f"decoder (about {MAX_DEPTH_HINT} levels or more{near})")

    def decode_meta(self, prefix: bytes, suffix: bytes, end_abs: int) -> dict:
        doc = prefix + b'"traceEvents": []' + suffix
        try:
            meta = msgspec.json.decode(doc)
        except (msgspec.DecodeError, msgspec.ValidationError, RecursionError) as exc:
            fixed = repair.repair(doc, self.split.repairs)
            try:
                meta = repair.loads_args(fixed, self.split.repairs)
            except (msgspec.DecodeError, ValueError, RecursionError):
                m = _ERR_AT.search(str(exc))
                k = int(m.group(1)) if m else len(doc)
                off = k if k < len(prefix) else end_abs + 1 + k - len(prefix) - 17
                what = _ERR_AT.sub("", str(exc)).replace("JSON is malformed: ", "").strip()
                if "trailing characters" in what:
                    what += " (two JSON documents concatenated?)"
                where = "before" if k < len(prefix) else "after"
                self.fail(f"invalid JSON {where} the traceEvents array at byte {off}: {what}")
        if not isinstance(meta, dict):
            self.fail("top-level JSON value is not an object")
        meta.pop("traceEvents", None)
        return meta


_BRACKETS = re.compile(rb'[\[\]{}"]')
_RETRY, _SLOW = object(), object()
FAST_RETRIES = 8          # earlier cuts tried (one C decode each) before the Python scan
_NONFINITE_AT = (b"NaN", b"Inf", b"-In")


def _fast_verdict(doc: bytes, exc: Exception):
    """What a failed fast decode means: ``_RETRY``, ``_SLOW``, or None (a real error)."""
    if isinstance(exc, RecursionError):
        return _SLOW
    msg = str(exc)
    m = _ERR_AT.search(msg)
    if m is None:                       # "truncated" (a cut inside a string), bad UTF-8
        return _RETRY if "truncated" in msg else _SLOW
    k = int(m.group(1))
    if k >= len(doc) - 1:               # at the ']' we appended: the cut was inside a value
        return _RETRY
    if "trailing characters" in msg or "surrogate" in msg or doc[k:k + 3] in _NONFINITE_AT:
        return _SLOW                    # the array ended before the cut / something to repair
    return None


def _deepest(doc: bytes, limit: int) -> int:
    """Index where string-aware nesting first exceeds ``limit`` (-1 if never)."""
    depth, i, n = 0, 0, len(doc)
    while i < n:
        m = _BRACKETS.search(doc, i)
        if m is None:
            return -1
        j = m.start()
        c = doc[j]
        if c == 0x22:
            k = string_end(doc, j + 1, j + 1)
            if k < 0:
                return -1
            i = k
            continue
        depth += 1 if c in b"[{" else -1
        if depth > limit:
            return j
        i = j + 1
    return -1


def _first_diff(a: bytes, b: bytes) -> int:
    """Index of the first byte where ``a`` and ``b`` differ (binary search on slices)."""
    lo, hi = 0, min(len(a), len(b))
    while lo < hi:
        mid = (lo + hi) // 2
        if a[lo:mid + 1] == b[lo:mid + 1]:
            lo = mid + 1
        else:
            hi = mid
    return lo


def iter_batches(chunks: Iterable[bytes], decoder: msgspec.json.Decoder, source: str,
                 split: Split) -> Iterator[list]:
    """Yield lists of decoded events; fill ``split.meta`` at the end."""
    return _Splitter(decoder, source, split).run(chunks)


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
