"""read/repair.py: the three repairs (bad UTF-8, lone surrogates, NaN/Infinity), lenient args, warning lines."""

from __future__ import annotations

from collections import Counter

import msgspec
import pytest

from perfreport.read.repair import BIGINT, NONFINITE, SURROGATE, UTF8, lines, loads_args, repair


def test_a_clean_document_comes_back_unchanged_and_uncounted():
    doc = b'{"name": "aten::mm", "ts": 1.5, "args": {"s": "\\\\ud800 is text", "pair": "\\ud83d\\ude00"}}'
    counts = Counter()
    assert repair(doc, counts) == doc
    assert counts == Counter()


def test_invalid_utf8_becomes_replacement_characters():
    counts = Counter()
    out = repair(b'{"name": "a\xffb\xfe"}', counts)
    assert out == '{"name": "a\ufffdb\ufffd"}'.encode()
    assert counts == Counter({UTF8: 2})


def test_lone_surrogates_are_replaced_and_pairs_kept():
    counts = Counter()
    out = repair(b'["\\ud800", "\\udc00x", "\\ud83d\\ude00"]', counts)
    assert out == b'["\\ufffd", "\\ufffdx", "\\ud83d\\ude00"]'
    assert counts == Counter({SURROGATE: 2})


def test_non_finite_literals_become_null_outside_strings_only():
    counts = Counter()
    out = repair(b'{"dur": NaN, "a": -Infinity, "b": Infinity, "name": "NaN Infinity"}', counts)
    assert out == b'{"dur": null, "a": null, "b": null, "name": "NaN Infinity"}'
    assert counts == Counter({NONFINITE: 3})


def test_loads_args_keeps_integers_beyond_64_bits_as_text():
    counts = Counter()
    huge = "9" * 5000  # beyond what msgspec (and Python's int-from-text limit) takes
    doc = f'{{"n": {huge}, "m": 18446744073709551615, "big": 18446744073709551616, "k": -5}}'
    assert loads_args(doc.encode(), counts) == {
        "n": huge,
        "m": 18446744073709551615,
        "big": "18446744073709551616",
        "k": -5,
    }
    assert counts == Counter({BIGINT: 2})


def test_loads_args_takes_large_integers_msgspec_can_decode_as_integers():
    counts = Counter()
    assert loads_args(b'{"n": 123456789012345678901234567890}', counts) == {"n": 123456789012345678901234567890}
    assert counts == Counter()


def test_loads_args_repairs_then_decodes():
    counts = Counter()
    assert loads_args(b'{"v": NaN, "s": "\\udfff"}', counts) == {"v": None, "s": "\ufffd"}
    assert counts == Counter({NONFINITE: 1, SURROGATE: 1})


def test_loads_args_refuses_what_is_not_json():
    with pytest.raises((msgspec.DecodeError, ValueError)):
        loads_args(b'{"v": ', Counter())


def test_lines_one_per_kind_in_a_fixed_order_with_first_event():
    counts = Counter({BIGINT: 1, UTF8: 3, "something else": 2, NONFINITE: 0})
    assert lines(counts, {UTF8: 17}) == [
        f"3 {UTF8} (first in event 17)",
        f"1 {BIGINT}",
        "2 something else",
    ]
    assert lines(Counter()) == []
