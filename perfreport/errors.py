"""Errors that reach the user as one line on stderr (never a traceback), and the signal exits."""

from __future__ import annotations

import re
import signal

# characters that must not reach a terminal or a cell as they are: C0/C1 controls (ANSI
# escapes start with ESC), bidi overrides (text that displays in another order than it
# reads) and lone surrogates (not encodable as UTF-8)
_UNSAFE = "[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]"
_LATIN1_CONTROLS = bytes(range(0x20)) + bytes(range(0x7F, 0xA0))  # what _UNSAFE matches below U+0100


def unsafe() -> re.Pattern:
    """:data:`_UNSAFE` compiled, on the first string that needs it (re caches it; compiling
    the surrogate range costs 1-5 ms, which a command line start that prints nothing saves)."""
    return re.compile(_UNSAFE)


def _escape(m: re.Match) -> str:
    c = m.group(0)
    o = ord(c)
    if 0xD800 <= o <= 0xDFFF:
        return "\ufffd"
    return f"\\x{o:02x}" if o < 0x100 else f"\\u{o:04x}"


def printable(s: str, keep_newlines: bool = False) -> str:
    """``s`` with control characters, ANSI escapes and bidi overrides shown as ``\\xNN`` /
    ``\\uNNNN`` text and lone surrogates as U+FFFD (so one name is one visible line)."""
    try:  # the common cases at C speed: nothing to escape
        b = s.encode("latin-1")  # a copy of a string held one byte a character
    except UnicodeEncodeError:
        if s.isprintable():  # every character escaped below is in Unicode's Cc, Cf or Cs: not printable
            return s
    else:
        if len(b.translate(None, _LATIN1_CONTROLS)) == len(b):
            return s
    if keep_newlines:
        return "\n".join(unsafe().sub(_escape, part) for part in s.split("\n"))
    return unsafe().sub(_escape, s)


class BadInput(Exception):
    """The input trace (or an option, or an output target) is unusable. Exit code 2.

    The message names the file and the problem in one line.
    """

    exit_code = 2

    def __init__(self, source: str, problem: str):
        super().__init__(printable(f"{source}: {problem}"))
        self.source = source
        self.problem = problem


class ModelError(Exception):
    """A perf model cannot read its op event; the message becomes the row's reason column."""


class Interrupted(BaseException):
    """SIGINT / SIGTERM arrived: unwinds like KeyboardInterrupt (temporary files are removed
    on the way out); the process exits with 128 + the signal number (130 / 143)."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum
        self.exit_code = 128 + signum
        self.name = signal.Signals(signum).name


def exit_on_signals() -> None:
    """Turn SIGINT and SIGTERM into :class:`Interrupted` (SIGTERM would otherwise kill the
    process without running any cleanup)."""

    def handler(signum, frame):
        raise Interrupted(signum)

    for s in (signal.SIGINT, signal.SIGTERM):
        signal.signal(s, handler)


class InternalError(Exception):
    """A self-check of the report failed (a bug, never bad input). Exit code 1.

    The message names the check and the difference found, in one line.
    """

    exit_code = 1
