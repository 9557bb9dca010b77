"""read/scan.py: event boundaries found in one forward pass, through strings, nesting and chunk cuts."""

from __future__ import annotations

import pytest

from perfreport.read.scan import Scan, ScanError, event_spans, event_starts, resume_point, string_end


def test_string_end_counts_backslashes_before_the_quote():
    buf = b'"a\\"b\\\\" tail'
    assert string_end(buf, 1, 1) == 8  # the escaped quote at 3 is skipped; the quote at 7 follows two backslashes
    assert string_end(b'"open', 1, 1) == -1


def test_resume_point_drops_trailing_backslashes():
    assert resume_point(b'"ab\\\\', 1) == 3
    assert resume_point(b'"ab', 1) == 3


def test_events_with_nesting_and_tricky_strings():
    buf = b' {"a": {"b": [1, {"c": 2}]}}, {"s": "}, {"} ,{"x": "\\"}"}]'
    s = Scan(0, record_starts=True)
    s.run(buf)
    assert s.count == 3
    assert s.starts == [1, 30, 45]
    assert s.ends == [28, 43, 57]
    assert s.end == 57 and buf[s.end : s.end + 1] == b"]"
    assert s.last == 57


def test_a_scan_resumes_across_chunks_even_inside_a_string():
    whole = b'{"name": "a\\\\\\"b"}, {"x": 1}'
    for cut in range(1, len(whole)):
        s = Scan(0)
        s.run(whole[:cut])
        s.run(whole)
        assert s.count == 2, cut
        assert s.last == len(whole)


def test_shift_moves_every_index():
    s = Scan(0)
    s.run(b'{"a": 1}, {"b": "x')
    assert (s.last, s.count) == (8, 1)
    s.shift(8)
    assert s.last == 0
    s.run(b', {"b": "x"}')
    assert s.count == 2 and s.last == 12


def test_garbage_between_events_is_an_error_at_its_first_byte():
    with pytest.raises(ScanError) as e:
        Scan(0).run(b'{"a": 1}, 42')
    assert e.value.index == 10
    assert e.value.problem == "unexpected '4' between events (each traceEvents element must be an object)"
    with pytest.raises(ScanError, match=r"\\x00"):
        Scan(0).run(b"\x00")


def test_a_bracket_closing_an_event_is_an_error():
    with pytest.raises(ScanError) as e:
        Scan(0).run(b'{"a": 1]')
    assert e.value.index == 7 and "']' closes an event object" in str(e.value)


def test_event_spans_stop_at_a_cut_off_or_broken_event():
    buf = b'{"a": 1}, {"b": 2}, {"c": '
    assert event_spans(buf, 0, len(buf)) == ([0, 10, 20], [8, 18])
    assert event_starts(buf, 0, 18) == [0, 10]
    assert event_spans(b'{"a": 1}, x', 0, 11) == ([0], [8])
