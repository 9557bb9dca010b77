"""What the reader recovers from (with a counted warning) instead of refusing the trace.

Only three things are repaired, and only after msgspec has refused a batch that starts
and ends on true event boundaries (so this code never runs on a clean trace):

- invalid UTF-8 byte sequences -> U+FFFD (profilers copy C++ names byte for byte);
- lone UTF-16 surrogate escapes (``"\\ud800"`` without its pair) -> ``\\ufffd``;
- the non-standard literals ``NaN``, ``Infinity``, ``-Infinity`` (Python's ``json.dump``
  writes them) outside strings -> ``null``; a field that needs a number (``ts``, ``dur``)
  then counts as missing, which is fatal for that event.

:func:`loads_args` is the lenient decoder for one event's ``args``: the repairs above,
plus integers too large for 64 bits (a 5,000-digit annotation value) kept as their
decimal text, so the report shows them and a perf model refuses them by name.
"""

from __future__ import annotations

import codecs
import json
import re
from collections import Counter

import msgspec

UTF8 = "invalid UTF-8 byte sequences replaced by U+FFFD"
SURROGATE = "lone UTF-16 surrogate escapes replaced by U+FFFD"
NONFINITE = "NaN/Infinity literals read as null"
BIGINT = "integers beyond 64 bits kept as text"

_spans: list[int] = []


def _fffd(exc: UnicodeDecodeError):
    _spans.append(exc.start)
    return "\ufffd", exc.end


codecs.register_error("perfreport.fffd", _fffd)

# an escaped backslash (kept), a valid surrogate pair (kept), or a lone surrogate escape
_SURR = re.compile(
    rb"\\\\|\\u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2}"
    rb"|\\u[dD][89a-fA-F][0-9a-fA-F]{2}"
)
# a whole string (kept) or a non-finite literal outside strings
_NONFIN = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"|-?Infinity|NaN')
_NONFIN_ANY = re.compile(rb"Infinity|NaN")


def repair(doc: bytes, counts: Counter) -> bytes:
    """``doc`` with the repairs above applied; adds what it changed to ``counts``."""
    try:
        doc.decode("utf-8")
    except UnicodeDecodeError:
        _spans.clear()
        doc = doc.decode("utf-8", "perfreport.fffd").encode("utf-8")
        counts[UTF8] += len(_spans)
        _spans.clear()
    if b"\\u" in doc or b"\\U" in doc:
        n = 0

        def lone(m):
            nonlocal n
            s = m.group(0)
            if len(s) == 6:
                n += 1
                return b"\\ufffd"
            return s

        doc = _SURR.sub(lone, doc)
        if n:
            counts[SURROGATE] += n
    if _NONFIN_ANY.search(doc):
        k = 0

        def null(m):
            nonlocal k
            s = m.group(0)
            if s[:1] == b'"':
                return s
            k += 1
            return b"null"

        doc = _NONFIN.sub(null, doc)
        if k:
            counts[NONFINITE] += k
    return doc


def loads_args(raw: bytes, counts: Counter):
    """Decode one ``args`` value leniently (see the module docstring).

    Raises ``RecursionError`` for nesting the decoders cannot follow and
    ``msgspec.DecodeError`` / ``ValueError`` for what is not JSON even after repair.
    """
    fixed = repair(bytes(raw), counts)
    try:
        return msgspec.json.decode(fixed)
    except msgspec.ValidationError:  # an integer beyond 64 bits
        pass
    n = 0

    def big(s: str):
        nonlocal n
        if len(s) <= 20:
            v = int(s)
            if -(1 << 63) <= v < (1 << 64):
                return v
        n += 1
        return s

    out = json.loads(fixed, parse_int=big)
    counts[BIGINT] += n
    return out


_ORDER = {UTF8, SURROGATE, NONFINITE, BIGINT}


def lines(counts: Counter, firsts: dict | None = None) -> list[str]:
    """Warning lines for the notes sheet and stderr, one per kind of repair."""
    out = []
    for kind in (UTF8, SURROGATE, NONFINITE, BIGINT, *sorted(set(counts) - _ORDER)):
        n = counts.get(kind, 0)
        if n:
            where = f" (first in event {firsts[kind]})" if firsts and kind in firsts else ""
            out.append(f"{n} {kind}{where}")
    return out


__all__ = ["repair", "loads_args", "lines", "UTF8", "SURROGATE", "NONFINITE", "BIGINT"]
