"""perfreport.errors.printable: its fast paths (nothing to escape, found at C speed) give what the
escaping gives, for every character it escapes and their neighbours."""

from __future__ import annotations

from perfreport.errors import printable, unsafe


def test_every_escaped_character_and_its_neighbours():
    escaped = [c for c in list(range(0x3000)) + list(range(0xD800, 0xE000)) if unsafe().match(chr(c))]
    assert len(escaped) == 32 + 33 + 5 + 4 + 2048  # C0, DEL + C1, bidi embeddings, isolates, surrogates
    for c in escaped + [0x20, 0x7E, 0xA0, 0xB5, 0xFF, 0x100, 0x2029, 0x202F, 0xFEFF, 0xFFFE, 0x10000]:
        for s in (chr(c), "ab" + chr(c), "µ" + chr(c) + "x", "…" + chr(c)):
            assert printable(s) == unsafe().sub(lambda m: _escape_by_hand(m.group(0)), s), hex(c)


def _escape_by_hand(ch: str) -> str:
    o = ord(ch)
    return "\ufffd" if 0xD800 <= o <= 0xDFFF else (f"\\x{o:02x}" if o < 0x100 else f"\\u{o:04x}")


def test_by_hand():
    assert printable("plain ascii, [x]") == "plain ascii, [x]"
    assert printable("5 µs") == "5 µs"  # one byte a character, nothing to escape
    assert printable("a\x1b[31mred") == "a\\x1b[31mred"
    assert printable("µ\x85") == "µ\\x85"  # a C1 control among one-byte characters
    assert printable("x\u202eevil…") == "x\\u202eevil…"
    assert printable("a\nb", keep_newlines=True) == "a\nb"
    assert printable("a\nb") == "a\\x0ab"
