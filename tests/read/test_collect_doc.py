"""``_collect.add_doc`` (perfreport/read/_collect.c: a batch read from its bytes, no Ev per
event) against the reference: msgspec's decode of the same bytes, then Collector.add_python.
Every field of the Collector byte for byte (test_collect_c.full_state), on every fixture and
shared trace, on the odd events of test_exact.py, on events whose top-level values take each
of the first pass's ways (simple, decoded alone by msgspec, refused), on generated events; and
None with nothing changed wherever add_doc is unsure."""

from __future__ import annotations

import json
import math
import struct

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from perfreport.errors import BadInput
from perfreport.read import read_trace
from perfreport.read.kineto import Collector
from perfreport.read.schema import EVENT_DECODER, Ev
from perfreport.read.source import Source
from perfreport.read.splitter import Split, iter_batches
from tests.read.test_collect_c import BAD_EVENTS, BIG, ODD_ARGS, TRACES, around, full_state, pytestmark  # noqa: F401
from tests.read.test_exact import EDGE, _x


def _docs(path) -> list[bytes]:
    """The batches' bytes the splitter offers add_doc while reading path (less the ones its fast
    path cut wrong, which msgspec refuses and the splitter cuts again)."""
    docs: list[bytes] = []

    def keep(items, partial=False):
        doc = b"[" + bytes(items) + b"]"
        if _decodes(doc):
            docs.append(doc)
        return None

    for _ in iter_batches(Source(str(path)).chunks(None), EVENT_DECODER, path.name, Split(), direct=keep):
        pass
    return docs


def _run_doc(col: Collector, doc: bytes, bare: bool = False):
    """add_doc (bare: given the array's items alone), or (where it declines) the decode and add it
    stands for: (taken, error)."""
    try:
        n = col.add_doc(doc[1:-1] if bare else doc, bare=bare)
        if n is None:
            col.add(EVENT_DECODER.decode(doc))
        return n is not None, None
    except BadInput as exc:
        return True, str(exc)


def _run_ref(col: Collector, doc: bytes, python: bool = True):
    """msgspec's decode of doc, then the Python loop (or the C loop on the Ev, which
    test_collect_c holds equal to it on the same traces: the whole-trace cases, to keep them cheap)."""
    try:
        (col.add_python if python else col.add)(EVENT_DECODER.decode(doc))
    except BadInput as exc:
        return str(exc)
    return None


def _same(docs: list[bytes], bare: bool = False, python: bool = True, **kw) -> int:
    """Both ways over docs; the number add_doc took."""
    c, ref = Collector("t.json", **kw), Collector("t.json", **kw)
    taken = 0
    for doc in docs:
        t, err = _run_doc(c, doc, bare)
        taken += t
        assert err == _run_ref(ref, doc, python)
        if err:
            break
    assert full_state(c) == full_state(ref)
    return taken


# traces with batches add_doc declines (msgspec reads them, as before), and why
UNSURE: dict[str, int] = {}


@pytest.mark.parametrize("path", TRACES, ids=[str(p.relative_to(p.parents[1])) for p in TRACES])
def test_every_trace_reads_byte_identical_from_its_bytes(path):
    docs = _docs(path)
    ways = [(True, {"keep_python": True, "launch_kernels": True}), (False, {})]
    if path.stat().st_size > BIG:  # the two big ones: analyze's own way (keep_python costs 1.5-3 CPU s
        ways = ways[1:]  # a way there, in exact.py's Python rows; every other trace takes it)
    for bare, kw in ways:
        assert _same(docs, bare, python=False, **kw) == len(docs) - UNSURE.get(path.name, 0)


def test_read_trace_takes_the_bytes_path_and_reads_the_same():
    path = TRACES[0]
    seen = []
    fast = read_trace(str(path))
    import perfreport.read as read_mod

    orig = Collector.add_doc
    try:
        Collector.add_doc = lambda self, doc, bare=False, partial=False: seen.append(1)  # declines (None)
        slow = read_trace(str(path))
    finally:
        Collector.add_doc = orig
    assert seen and full_state(fast.records) == full_state(slow.records)
    assert read_mod.read_trace is read_trace


def _doc(events: list, sep=(",", ":")) -> bytes:
    return json.dumps(events, separators=sep, ensure_ascii=False).encode()


@pytest.mark.parametrize("batch", [1, 3, 100])
def test_the_odd_events_of_test_exact(batch):
    docs = [_doc(EDGE[i : i + batch]) for i in range(0, len(EDGE), batch)]
    for kw in ({}, {"keep_python": True, "launch_kernels": True}):
        _same(docs, **kw)


def _six(args_raw: bytes) -> bytes:
    """test_collect_c's six kept kinds of event, each with these args bytes."""
    evs = [
        _x("cpu_op", "aten::mm", 1, 5),
        _x("cuda_runtime", "cudaLaunchKernel", 2, 1),
        _x("kernel", "gemm", 3, 1, pid=0, tid=7),
        _x("user_annotation", "a", 4, 1, tid=2),
        _x("cuda_driver", "cuLaunchKernel", 5, 1),
        _x("gpu_memset", "Memset", 6, 1),
    ]
    parts = []
    for e in evs:
        e.pop("args", None)
        parts.append(_doc(e)[:-1] + b',"args":' + args_raw + b"}")
    return b"[" + b",".join(parts) + b"]"


@pytest.mark.parametrize("raw", ODD_ARGS)
def test_odd_args_read_the_same_from_the_bytes(raw):
    try:
        EVENT_DECODER.decode(_six(raw))
    except msgspec.DecodeError:
        pytest.skip("not JSON as an event's args (test_collect_c feeds it as a Raw)")
    for kw in ({}, {"keep_python": True, "launch_kernels": True}):
        _same([_six(raw), _six(raw)], **kw)  # the first sight interns (exact path), the second finds


# top-level values of an event, raw, each taking one of the first pass's ways
ODD_FIELDS = [
    b'"ph":"X","cat":"cpu_op","name":"a\\"b","pid":1,"tid":1,"ts":1,"dur":2',  # escaped name: msgspec
    b'"ph":"X","cat":"cpu_op","name":"\xc3\xa9","pid":1,"tid":1,"ts":1,"dur":2',  # non-ASCII: unsure
    b'"ph":"X","cat":"cpu_op","name":"\\u00e9","pid":1,"tid":1,"ts":1,"dur":2',  # \\u: unsure
    b'"ph":"X","cat":"cpu_op","name":"a","pid":"p1","tid":"t","ts":1.5,"dur":2.25',
    b'"ph":"X","cat":"cpu_op","name":"a","pid":123456789012345678901,"tid":1,"ts":1,"dur":2',
    b'"ph":"X","cat":"cpu_op","name":"a","pid":-0,"tid":-3,"ts":-0,"dur":-0.0',
    b'"ph":"X","cat":"cpu_op","name":"a","pid":1,"tid":1,"ts":1e3,"dur":2',  # exponent: unsure
    b'"ph":"X","cat":"cpu_op","name":"a","pid":1,"tid":1,"ts":null,"dur":2',
    b'"ph":"X","cat":"cpu_op","name":"a","pid":1,"tid":1,"dur":2',
    b'"ph":"X","cat":"cpu_op","name":"a","name":"b","pid":1,"tid":1,"ts":1,"dur":2',  # duplicate
    b'"ph":"X","cat":"cpu_op","name":"a","pid":1.5,"tid":1,"ts":1,"dur":2',  # msgspec refuses
    b'"ph":"X","cat":"cpu_op","name":"a","pid":1,"tid":1,"ts":"1","dur":2',  # msgspec refuses
    b'"ph":"X","cat":"kernel","name":"k","pid":1,"tid":1,"ts":1,"dur":-2,"args":{"stream":7}',
    b'"ph":"X","cat":"gpu_user_annotation","name":"g","pid":1,"tid":1,"ts":1,"dur":2',
    b'"ph":"X","cat":"kernel","name":"k","pid":"dev","tid":"s","ts":1,"dur":2,"args":{"correlation":3}',
    b'"ph":"s","cat":"ac2g","name":"f","pid":1,"tid":1,"ts":1,"id":5',
    b'"ph":"f","cat":"ac2g","name":"f","pid":1,"tid":1,"ts":1,"id":"5"',
    b'"ph":"s","cat":"ac2g","name":"f","pid":1,"tid":1,"id":5',
    b'"ph":"s","cat":"ac2g","name":"f","pid":1,"tid":1,"ts":1,"id":null',
    b'"ph":"s","cat":"other","name":"f","pid":1,"tid":1,"ts":1,"id":5',
    b'"ph":"M","name":"process_name","pid":1,"tid":0,"args":{"name":"p"}',
    b'"ph":"X","cat":"","name":"a","pid":1,"tid":1,"ts":1,"dur":2',
    b'"ph":"XX","cat":"cpu_op","name":"a","pid":1,"tid":1,"ts":1,"dur":2',
    b'"ph":"i","cat":"cpu_op","name":"a","pid":1,"tid":1,"ts":1',
    b'"ph":"X","cat":"cpu_op","name":"a","pid":1,"tid":1,"ts":1,"dur":2,"extra":[1,{"x":null}]',
    b'"ph":"X","cat":"cpu_op","name":"a","pid":1,"tid":1,"ts":1,"dur":2,"extra":[1 2]',  # bad JSON
    b'"ph":"X","cat":"cpu_op","name":"a","pid":1,"tid":1,"ts":01,"dur":2',  # bad JSON
    b'"ph" : "X" , "cat":"cpu_op","name":"a","pid":1,"tid":1,"ts":1 ,"dur":2 ',
    b'"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":1,"dur":2,"args":{"correlation":9,"kernel":"k"}',
    b"",
]


def _decodes(doc: bytes) -> bool:
    try:
        EVENT_DECODER.decode(doc)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return False
    return True


@pytest.mark.parametrize("fields", ODD_FIELDS)
def test_odd_top_level_values_read_the_same(fields):
    plain = b'{"ph":"X","cat":"cpu_op","name":"before","pid":1,"tid":1,"ts":0,"dur":9}'
    doc = b"[" + plain + b",{" + fields + b"}," + plain + b"]"
    for bare, kw in ((True, {}), (False, {"keep_python": True, "launch_kernels": True})):
        if _decodes(doc):
            _same([doc, doc], bare, **kw)
        else:  # what msgspec refuses add_doc declines, having done nothing
            c = Collector("t.json", **kw)
            assert c.add_doc(doc) is None
            assert full_state(c) == full_state(Collector("t.json", **kw))


@pytest.mark.parametrize(
    "doc",
    [
        b"",
        b"[",
        b'[{"ph":"X"}',
        b'[{"ph":"X"},]',
        b'[{"ph":"X"}] x',
        b'[{"ph":"X"}]]',
        b"[1]",
        b'[{"ph":"X"},"e"]',
        b'{"ph":"X"}',
        b'[{"ph":"X","cat":"cpu_op","name":"a","ts":1,"dur":1}}, {"ph":"X"}]',  # a cut inside an event
        b'[{"ph":"X","args":{"a":"},"}]',
    ],
)
def test_add_doc_declines_what_it_is_unsure_of_and_changes_nothing(doc):
    c = Collector("t.json", launch_kernels=True)
    c.add_doc(b'[{"ph":"X","cat":"cpu_op","name":"a","pid":1,"tid":1,"ts":0,"dur":1}]')
    before = full_state(c)
    if doc[:1] == b"[" and doc[-1:] == b"]" and not _decodes(doc):  # the bare items decline too
        assert c.add_doc(doc[1:-1], bare=True) is None and full_state(c) == before
    got = c.add_doc(doc)
    if got is None:
        assert full_state(c) == before
    else:  # taken: then msgspec reads the same
        ref = Collector("t.json", launch_kernels=True)
        ref.add_python(EVENT_DECODER.decode(b'[{"ph":"X","cat":"cpu_op","name":"a","pid":1,"tid":1,"ts":0,"dur":1}]'))
        ref.add_python(EVENT_DECODER.decode(doc))
        assert full_state(c) == full_state(ref)


def test_an_empty_array_is_taken_as_no_events():
    c = Collector("t")
    assert c.add_doc(b"[ ]") == 0 and c.add_doc(b" ", bare=True) == 0 and c.n_events == 0


@pytest.mark.parametrize("items", [b"{}, ", b",{}", b"{},,{}", b"{}]", b"[{}]", b"{} {}"])
def test_bare_items_are_events_and_commas_only(items):
    assert Collector("t").add_doc(items, bare=True) is None


@pytest.mark.parametrize("bad", BAD_EVENTS)
def test_an_error_leaves_the_same_state_both_ways(bad):
    events = around(bad)
    c, ref = Collector("t.json"), Collector("t.json")
    taken, err = _run_doc(c, _doc(events))
    assert taken and err == _run_ref(ref, _doc(events)) is not None
    assert full_state(c) == full_state(ref) and c.n_events == 5


def _bits(x: float) -> bytes:
    return struct.pack("<d", x)


# decimals on both sides of Clinger's fast path (significand <= 2**53, <= 22 fraction digits)
NUMBERS = [
    "0", "-0", "0.0", "-0.0", "1", "1.5", "0.1", "0.30000000000000004", "1711234567890.123",
    "9007199254740992.0", "9007199254740993.0", "9007199254740993", "123456789012345678",
    "0.0000000000000000000001", "0.00000000000000000000001", "12345678901234567.5",
    "1.00000000000000011102230246251565", "4503599627370497.5", "99999999999999999", "0.5",
    "-1234.5678", "1.7976931348623157", "2.2250738585072014", "0.000001", "1000000.000001",
]  # fmt: skip


@pytest.mark.parametrize("num", NUMBERS)
def test_numbers_read_as_msgspec_reads_them_bit_for_bit(num):
    dur = num.lstrip("-")
    doc = ('[{"ph":"X","cat":"cpu_op","name":"a","pid":1,"tid":1,"ts":%s,"dur":%s}]' % (num, dur)).encode()
    c = Collector("t")
    taken = c.add_doc(doc)
    assert taken == (1 if len(num) <= 24 else None)  # the scanner keeps numbers to 24 bytes
    if taken is None:
        c.add(EVENT_DECODER.decode(doc))
    want = msgspec.json.decode(doc, type=list[Ev])[0]
    assert _bits(c.c.ts[0]) == _bits(want.ts) and _bits(c.c.dur[0]) == _bits(want.dur)


_text = st.one_of(st.sampled_from(["", "a", 'q"', "\\", "é", "\u2028", "cpu_op", "kernel"]), st.text(max_size=5))
_num = st.one_of(
    st.integers(-(10**20), 10**20),
    st.floats(allow_nan=False, allow_infinity=False),
    st.decimals(allow_nan=False, allow_infinity=False, places=3).map(lambda d: float(d)),
    st.none(),
)
_id = st.one_of(st.integers(-(10**20), 10**20), st.integers(0, 99), _text)
_bad = st.one_of(st.none(), st.booleans(), st.floats(0, 9))  # msgspec refuses these as an Id
_event = st.fixed_dictionaries(
    {},
    optional={
        "ph": st.sampled_from(["X", "s", "f", "M", "i", "", "XX"]),
        "cat": st.sampled_from(["cpu_op", "kernel", "cuda_runtime", "ac2g", "gpu_user_annotation", "python_function"]),
        "name": _text,
        "pid": st.one_of(_id, _id, _id, _bad),
        "tid": _id,
        "ts": _num,
        "dur": _num,
        "id": st.one_of(_id, st.none()),
        "args": st.one_of(
            st.none(),
            st.dictionaries(st.sampled_from(["correlation", "External id", "stream", "device", "kernel"]), _id),
        ),
        "other": st.one_of(_num, _text, st.lists(_num, max_size=2)),
    },
)


@settings(max_examples=200, deadline=None)
@given(st.lists(_event, min_size=1, max_size=6), st.sampled_from([(",", ":"), (", ", ": ")]), st.booleans())
def test_generated_events_read_the_same_from_their_bytes(events, sep, ascii_only):
    for e in events:  # json.dumps writes floats msgspec reads back as written
        for k in ("ts", "dur"):
            if isinstance(e.get(k), float) and not math.isfinite(e[k]):
                del e[k]
    doc = json.dumps(events, separators=sep, ensure_ascii=ascii_only).encode()
    if not _decodes(doc):
        c = Collector("t.json")
        assert c.add_doc(doc) is None and full_state(c) == full_state(Collector("t.json"))
        return
    _same([doc], launch_kernels=True)


_EV1 = b'{"ph":"X","cat":"cpu_op","name":"a","pid":1,"tid":1,"ts":0,"dur":1,"args":{"External id":3}}'
_EV2 = b'{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":1,"dur":1,"args":{"correlation":4}}'


@pytest.mark.parametrize(
    "tail",
    [
        b', {"ph":"X","args":{"a":{"b":1},',  # a cut inside an event's nested object
        b', {"ph":"X","name":"cut in a str',  # inside a string
        b"], \"deviceProperties\": [{}]",  # the array's end, then the document's next key
        b", ,{}",  # bad bytes between events
        b', {"ph":"X","pid":1.5}',  # an event msgspec refuses (not whole for the scan)
    ],
)
def test_partial_takes_the_whole_events_before_a_failure(tail):
    items = _EV1 + b", " + _EV2 + tail
    c = Collector("t")
    assert c.add_doc(items, bare=True) is None and full_state(c) == full_state(Collector("t"))
    got = c.add_doc(items, bare=True, partial=True)
    if tail.endswith(b'1.5}'):  # the scan took the event whole; msgspec refuses it: no partial
        assert got is None and full_state(c) == full_state(Collector("t"))
        return
    stop = len(_EV1) + 2 + len(_EV2)
    assert got == (2, stop) and items[:stop].endswith(b"}")
    ref = Collector("t")
    ref.add_python(EVENT_DECODER.decode(b"[" + items[:stop] + b"]"))
    assert full_state(c) == full_state(ref)


def test_partial_needs_one_whole_event_and_answers_a_count_when_all_are_whole():
    assert Collector("t").add_doc(b'{"ph":"X","args":{', bare=True, partial=True) is None
    assert Collector("t").add_doc(_EV1 + b"," + _EV2, bare=True, partial=True) == 2
