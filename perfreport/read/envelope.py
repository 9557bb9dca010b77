"""The bytes around the ``traceEvents`` array: finding its start, decoding the metadata.

:class:`ArrayEnvelope` is the part of the splitter (:mod:`perfreport.read.splitter`) that reads
the document's first level: a string-aware scan of the top-level object finds the
``"traceEvents": [`` key (a ``traceEvents`` key nested in another object is not it), resumably
across chunks, within :data:`MAX_PREFIX` bytes; once the array is read, the bytes kept from
before and after it are decoded as the top-level metadata (``deviceProperties``,
``distributedInfo``, ``baseTimeNanoseconds`` ...), whatever the key order.
"""

from __future__ import annotations

import re

import msgspec

from perfreport.read import repair
from perfreport.read.diagnose import ERR_AT
from perfreport.read.scan import BRACKETS, resume_point, string_end

MiB = 1 << 20
MAX_PREFIX = 64 * MiB  # bytes before "traceEvents": [ (metadata keys written first)

_WS = re.compile(rb"[ \t\r\n]*")
_TS_KEY = b'"traceEvents"'
# A top-level JSON array is the Chrome trace "JSON Array Format": the events alone, no metadata.
# Kineto wrote it until 9c66d1eb (2020-12-02, "Use JSON Object format for chrome trace logger":
# libkineto/src/output_json.cpp ChromeTraceLogger opened the file with "[" and closed it with "]");
# PyTorch builds of that time (the TensorBoard plugin's samples of January 2021) carry it. It is
# read as an object whose traceEvents is that array (ArrayEnvelope.top_array).
TOP_ARRAY = "JSON Array Format"


def mib(n: int) -> str:
    return f"{n // MiB} MiB"


class ArrayEnvelope:
    """Mixin of the splitter: uses its ``buf``, ``base``, ``split`` and ``fail``."""

    def find_array(self, it) -> bytes | None:
        """Read chunks from ``it`` until the array opens; returns the bytes before the key
        (``buf`` then starts just after the ``[``, at absolute offset ``base``)."""
        buf = self.buf
        i = depth = 0
        floor = -1  # inside a string (resume index) when >= 0
        key_at = -1  # a depth-1 "traceEvents" string waiting for its ':' and '['
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
                lead = j = _WS.match(buf, lead).end()  # resumed: blanks scanned once
                if j >= n:
                    if n > MAX_PREFIX:
                        self.fail(f"no JSON value in the first {mib(MAX_PREFIX)} (only blanks)")
                    continue
                c = buf[j]
                if c == 0x5B:  # the JSON Array Format: a bare event list (see TOP_ARRAY)
                    self.top_array = True
                    del buf[: j + 1]
                    self.base = j + 1
                    return b"{"
                if c != 0x7B:
                    self.fail(
                        f"not JSON: starts with byte {bytes(buf[j : j + 1])!r} at offset {j} "
                        "(a Kineto trace is a JSON object)"
                    )
                started, i, depth = True, j + 1, 1
            while True:
                if key_at >= 0:
                    k = key_scan = _WS.match(buf, key_scan).end()
                    if k >= n:
                        break  # need more bytes to decide
                    if not key_colon and buf[k] == 0x3A:  # ':'
                        key_colon, key_scan = True, k + 1
                        continue
                    if key_colon:
                        if buf[k] != 0x5B:
                            self.fail(f"traceEvents (byte {key_at}) is not an array")
                        prefix = bytes(buf[:key_at])
                        if prefix[:3] == b"\xef\xbb\xbf":  # a UTF-8 byte order mark
                            prefix = b"   " + prefix[3:]
                        del buf[: k + 1]
                        self.base = k + 1
                        return prefix
                    key_at = -1  # a value "traceEvents", not the key
                if floor >= 0:
                    k = string_end(buf, i, floor)
                    if k < 0:
                        i = resume_point(buf, floor)
                        break
                    if depth == 1 and k - (floor - 1) == len(_TS_KEY) and buf[floor - 1 : k] == _TS_KEY:
                        key_at, key_scan, key_colon = floor - 1, k, False
                    floor, i = -1, k
                    continue
                m = BRACKETS.search(buf, i)
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
                self.fail(f"no top-level traceEvents array in the first {mib(MAX_PREFIX)}")
        if not started:  # fewer than 3 bytes, or only blanks
            b = bytes(buf).strip()
            if not buf or not b:
                self.fail("input is empty" if not buf else "only blanks, no JSON value")
            if b[:1] == b"[":
                self.fail("the top-level event array is empty" if b == b"[]" else "truncated JSON: a lone '['")
            if b[:1] != b"{":
                self.fail(f"not JSON: starts with byte {b[:1]!r} (a Kineto trace is a JSON object)")
        self.fail(
            "truncated JSON: the input ends before the traceEvents array"
            if depth
            else "not JSON (or truncated): no traceEvents array found"
        )

    def decode_meta(self, prefix: bytes, suffix: bytes, end_abs: int) -> dict:
        """The top-level object without its array: ``prefix`` and ``suffix`` joined by an empty
        ``"traceEvents": []`` (``end_abs``: offset of the array's ``]``, for messages)."""
        if getattr(self, "top_array", False):
            if suffix.strip():
                self.fail(f"data after the top-level event array (which ends at byte {end_abs})")
            suffix = b"}"
        doc = prefix + b'"traceEvents": []' + suffix
        try:
            meta = msgspec.json.decode(doc)
        except (msgspec.DecodeError, msgspec.ValidationError, RecursionError) as exc:
            fixed = repair.repair(doc, self.split.repairs)
            try:
                meta = repair.loads_args(fixed, self.split.repairs)
            except (msgspec.DecodeError, ValueError, RecursionError):
                m = ERR_AT.search(str(exc))
                k = int(m.group(1)) if m else len(doc)
                off = k if k < len(prefix) else end_abs + 1 + k - len(prefix) - 17
                what = ERR_AT.sub("", str(exc)).replace("JSON is malformed: ", "").strip()
                if "trailing characters" in what:
                    what += " (two JSON documents concatenated?)"
                where = "before" if k < len(prefix) else "after"
                self.fail(f"invalid JSON {where} the traceEvents array at byte {off}: {what}")
        if not isinstance(meta, dict):
            self.fail("top-level JSON value is not an object")
        meta.pop("traceEvents", None)
        return meta


__all__ = ["ArrayEnvelope", "MAX_PREFIX", "MiB", "mib"]
