"""Error messages of the splitter: where a bad byte is, in which event, and what is wrong.

:class:`Diagnose` is the part of the splitter (:mod:`perfreport.read.splitter`) that runs once
a batch failed to decode on true event boundaries: it repairs what may be repaired
(:mod:`perfreport.read.repair`: invalid UTF-8, lone surrogates, non-finite literals) and
otherwise ends the read with one line naming the **byte offset** (of the decompressed JSON) and
the **event index** (``traceEvents[i]``, or "after traceEvents[i]" between events), read off
msgspec's error text and the event boundaries of the batch.
"""

from __future__ import annotations

import re

import msgspec

from perfreport.read import repair
from perfreport.read.scan import BRACKETS, event_spans, event_starts, string_end

MAX_DEPTH_HINT = 900  # nesting the decoder follows (its recursion limit is ~1,000)
ERR_AT = re.compile(r"\(byte (\d+)\)")  # msgspec's "... (byte N)"
_VAL_AT = re.compile(r"^(.*?)(?: - at `\$\[(\d+)\](.*)`)?$", re.S)


class Diagnose:
    """Mixin of the splitter: uses its ``decoder``, ``base``, ``split`` and ``fail``."""

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
        m = ERR_AT.search(msg)
        k = int(m.group(1)) if m else len(doc) - 1
        what = ERR_AT.sub("", msg).replace("JSON is malformed: ", "").strip()
        if what == "Input data was truncated":
            what = "unterminated string or value"
        starts, ends = event_spans(doc, 1, len(doc))
        i = sum(1 for s in starts if s <= k) - 1
        n = self.split.n_events
        if i < 0:  # before the batch's first event: after the last one read (the scan's wording)
            where = f"after traceEvents[{n - 1}]" if n else "before traceEvents[0]"
        elif i < len(ends) and k >= ends[i]:
            where = f"after traceEvents[{n + i}]"
        else:
            where = f"in traceEvents[{n + i}]"
        at = (
            f"at byte {self.base + start + k - 1}"
            if exact
            else f"in the event starting at byte {self.base + start + starts[max(i, 0)] - 1}"
            if starts
            else ""
        )
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
        self.fail(f"malformed trace event traceEvents[{self.split.n_events + i}]{where}: {what}{field}")

    def too_deep(self, doc: bytes, start: int):
        k = _deepest(doc, MAX_DEPTH_HINT)
        idx = max(len(event_starts(doc, 1, k)) - 1, 0) if k >= 0 else 0
        near = f", near byte {self.base + start + k - 1}" if k >= 0 else ""
        self.fail(
            f"traceEvents[{self.split.n_events + idx}] is nested too deeply for the JSON "
            f"decoder (about {MAX_DEPTH_HINT} levels or more{near})"
        )


def _deepest(doc: bytes, limit: int) -> int:
    """Index where string-aware nesting first exceeds ``limit`` (-1 if never)."""
    depth, i, n = 0, 0, len(doc)
    while i < n:
        m = BRACKETS.search(doc, i)
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
        if a[lo : mid + 1] == b[lo : mid + 1]:
            lo = mid + 1
        else:
            hi = mid
    return lo


__all__ = ["Diagnose", "ERR_AT", "MAX_DEPTH_HINT"]
