"""Resumable structural scan of JSON bytes: strings, nesting depth, event boundaries.

The splitter's fast path cuts the stream at a ``}`` followed by ``,`` and lets msgspec
decide whether that was an event boundary. When it was not (a nested object, a string
holding ``},``, the end of the array, or bad bytes), :class:`Scan` finds the true
boundaries in one forward pass from a known boundary, in time linear in the bytes it
sees, and can be resumed when more bytes arrive (its state is a few integers). It does
not validate JSON: msgspec does that on the batches the scan delimits, so every error is
found by one decode of bytes that start at a true boundary.

The scan starts *between* events of the ``traceEvents`` array (depth 0). At depth 0 only
blanks, ``,``, ``{`` (an event) and ``]`` (the array's end) may appear; anything else is an
error at once, so a stream of garbage is refused at its first byte, not after a limit.
"""

from __future__ import annotations

import re

_TOK = re.compile(rb'[\[\]{}"]')
BRACKETS = _TOK  # the bytes that open or close a value ([ ] { } and the string quote)
_GAP = re.compile(rb"[ \t\r\n,]*")
_BLANKS = b" \t\r\n"
# a string's body up to and with its closing quote, from a byte that no backslash escapes
_STRING_REST = re.compile(rb'[^"\\]*(?:\\[\s\S][^"\\]*)*"')


class ScanError(Exception):
    """Structural problem at ``index`` (into the scanned buffer)."""

    def __init__(self, index: int, problem: str):
        super().__init__(problem)
        self.index = index
        self.problem = problem


def string_end(buf, i: int, floor: int) -> int:
    """Index just after the closing quote of a string whose body starts at or before ``i``
    (``floor``: first byte of the body, or a resume point not preceded by a backslash);
    -1 if the buffer ends first."""
    q = buf.find(b'"', i)
    if q < 0:
        return -1
    k = q - 1
    while k >= floor and buf[k] == 0x5C:  # backslashes before the quote
        k -= 1
    if (q - 1 - k) % 2 == 0:
        return q + 1
    # an escaped quote: the rest of the string in one regex pass (a body of many escaped quotes
    # took one loop turn per quote). After it the escapes pair up from q + 1 (a quote is no
    # backslash), so a quote is the end where the backslashes before it are even in number,
    # as above
    m = _STRING_REST.match(buf, q + 1)
    return -1 if m is None else m.end()


def resume_point(buf, floor: int) -> int:
    """Where to resume an unterminated string: the end, less any trailing backslashes."""
    k = len(buf)
    while k > floor and buf[k - 1] == 0x5C:
        k -= 1
    return k


class Scan:
    """Scan state over a buffer; indices are buffer indices (see :meth:`shift`).

    After :meth:`run`: ``last`` is just after the last complete event (a boundary), ``count``
    the events completed since the start, ``end`` the index of the array's ``]`` (or -1).
    """

    __slots__ = ("i", "depth", "str_floor", "last", "count", "end", "ev_start", "starts", "ends")

    def __init__(self, start: int, record_starts: bool = False):
        self.i = start
        self.depth = 0
        self.str_floor = -1  # >= 0: inside a string whose body resumes there
        self.last = start
        self.count = 0
        self.end = -1
        self.ev_start = -1
        self.starts: list[int] | None = [] if record_starts else None
        self.ends: list[int] = []

    def shift(self, d: int) -> None:
        """The buffer lost its first ``d`` bytes."""
        self.i -= d
        self.last -= d
        if self.str_floor >= 0:
            self.str_floor -= d
        if self.ev_start >= 0:
            self.ev_start -= d

    def run(self, buf, stop: int | None = None) -> None:
        """Advance over ``buf`` up to ``stop`` (default: its end) or the array's end."""
        n = len(buf) if stop is None else stop
        i, depth = self.i, self.depth
        search = _TOK.search
        try:
            if self.str_floor >= 0:
                k = string_end(buf, i, self.str_floor)
                if k < 0 or k > n:  # the resume point, kept by the finally below
                    i = resume_point(buf, self.str_floor) if stop is None else i
                    return
                self.str_floor = -1
                i = k
            while i < n:
                if depth == 0:
                    i = _GAP.match(buf, i).end()
                    if i >= n:
                        break
                    c = buf[i]
                    if c == 0x7B:  # '{': an event starts
                        self.ev_start = i
                        if self.starts is not None:
                            self.starts.append(i)
                        depth = 1
                        i += 1
                        continue
                    if c == 0x5D:  # ']': end of traceEvents
                        self.end = i
                        break
                    raise ScanError(i, _unexpected(buf, i))
                m = search(buf, i, n)
                if m is None:
                    i = n
                    break
                j = m.start()
                c = buf[j]
                if c == 0x22:
                    k = string_end(buf, j + 1, j + 1)
                    if k < 0 or k > n:
                        self.str_floor = j + 1
                        i = resume_point(buf, j + 1) if stop is None else j + 1
                        break
                    i = k
                elif c == 0x7B or c == 0x5B:
                    depth += 1
                    i = j + 1
                else:
                    depth -= 1
                    i = j + 1
                    if depth == 0:
                        if c != 0x7D:
                            raise ScanError(j, "']' closes an event object")
                        self.last = i
                        self.count += 1
                        if self.starts is not None:
                            self.ends.append(i)
                        self.ev_start = -1
        finally:
            self.i, self.depth = i, depth


def _unexpected(buf, i: int) -> str:
    c = bytes(buf[i : i + 1])
    shown = c.decode("latin-1") if 0x21 <= c[0] < 0x7F else f"\\x{c[0]:02x}"
    return f"unexpected '{shown}' between events (each traceEvents element must be an object)"


def event_starts(buf, start: int, stop: int) -> list[int]:
    """Start indices of the events in ``buf[start:stop]`` (which starts at a boundary)."""
    return event_spans(buf, start, stop)[0]


def event_spans(buf, start: int, stop: int) -> tuple[list[int], list[int]]:
    """(start indices, end indices) of the events in ``buf[start:stop]``; the last event
    may have no end (it is cut off or broken)."""
    s = Scan(start, record_starts=True)
    try:
        s.run(buf, stop)
    except ScanError:
        pass
    return s.starts or [], s.ends


__all__ = ["BRACKETS", "Scan", "ScanError", "event_starts", "event_spans", "string_end", "resume_point"]
