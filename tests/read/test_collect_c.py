"""The C accelerator of Collector.add (perfreport/read/_collect.c) against its Python loop
(Collector.add_python, the reference): every field of the Collector byte for byte -- columns,
side values, interned names / threads / devstreams / locations / args, the exact paths'
private tables, n_events, errors -- on every fixture and shared trace, on the odd events of
test_exact.py and on generated args that take each of the scanner's ways (read by the scanner,
handed to msgspec, handed to the exact paths). Skipped, saying why, when the extension is not
built (no C compiler at install time) or PERFREPORT_PURE_PYTHON turns it off."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
from pathlib import Path

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from perfreport.errors import BadInput
from perfreport.events import NONE, SIDE
from perfreport.read import kineto
from perfreport.read.kineto import Collector
from perfreport.read.schema import EVENT_DECODER, Ev
from perfreport.read.source import Source
from perfreport.read.splitter import Split, iter_batches
from tests.conftest import FIX, ROOT
from tests.read.test_exact import EDGE, _x

_BUILT = importlib.util.find_spec("perfreport.read._collect") is not None
_PURE = os.environ.get("PERFREPORT_PURE_PYTHON", "") not in ("", "0")
pytestmark = pytest.mark.skipif(
    not _BUILT or _PURE,
    reason="the C accelerator perfreport.read._collect is not built (no C compiler at install time: "
    "`pip install -e .` again with one) or PERFREPORT_PURE_PYTHON is set",
)


@pytest.fixture(autouse=True)
def _c_loop_in_use():
    """Built but not used (kineto refuses a build whose codes differ from schema's) fails here,
    rather than every comparison below comparing the Python loop with itself."""
    assert kineto._C is not None, "perfreport.read._collect is built but unused: rebuild it (setup.py build_ext)"


SHARED = Path(os.environ.get("PERFREPORT_SHARED", ROOT.parent / "shared")) / "traces"


def _slots(obj) -> tuple:
    names = [n for k in type(obj).__mro__ for n in getattr(k, "__slots__", ())]
    return tuple(getattr(obj, n, "<unset>") for n in names)


def full_state(col: Collector) -> dict:
    """Every attribute of the Collector, arrays as (typecode, bytes), records as their slots."""
    out = {}
    for k, v in vars(col).items():
        if k in ("c", "g", "flow_s", "flow_f"):
            v = {kk: (vv.typecode, bytes(vv)) if hasattr(vv, "typecode") else vv for kk, vv in vars(v).items()}
        elif k == "gpu_annotations":
            v = [_slots(a) for a in v]
        out[k] = v
    return out


def _traces() -> list[Path]:
    paths = sorted(FIX.rglob("*.json.gz")) + sorted((FIX / "linking").glob("*.json"))
    if SHARED.is_dir():
        paths += sorted(SHARED.rglob("*.json.gz"))
    seen, out = set(), []
    for p in paths:  # the shared folder holds copies of some fixtures
        h = hashlib.sha256(p.read_bytes()).digest()
        if h not in seen:
            seen.add(h)
            out.append(p)
    return out


TRACES = _traces()
# gzipped bytes above which a trace is one of the two big ones (resnet50's 0.98 MB, 30 MB of JSON;
# vllm_decode_full's capture, 2.4 MB): the next is 0.46 MB
BIG = 600_000


def both(batches, **kw) -> tuple[Collector, Collector]:
    """(C, Python) Collectors fed the same batches of Ev."""
    c, py = Collector("t", **kw), Collector("t", **kw)
    for b in batches:
        c.add(b)
        py.add_python(b)
    return c, py


@pytest.mark.parametrize("path", TRACES, ids=[str(p.relative_to(p.parents[1])) for p in TRACES])
def test_every_trace_reads_byte_identical_both_ways(path):
    batches = list(iter_batches(Source(str(path)).chunks(None), EVENT_DECODER, path.name, Split()))
    ways = ({}, {"keep_python": True, "launch_kernels": True})
    if path.stat().st_size > BIG:  # the two big ones: analyze's own way (as test_collect_doc)
        ways = ways[:1]
    for kw in ways:
        c, py = both(batches, **kw)
        assert c.n_events == sum(map(len, batches))
        assert full_state(c) == full_state(py)


def test_the_usual_event_is_read_by_the_scanner():
    """On a clean trace no kept event's args go through msgspec (the C loop's own reading)."""
    from perfreport.read import _collect

    path = FIX / "h100_qwen_0.5b.json.gz"
    batches = list(iter_batches(Source(str(path)).chunks(None), EVENT_DECODER, path.name, Split()))
    before = _collect.stats()
    col = Collector("t")
    for b in batches:
        col.add(b)
    after = _collect.stats()
    assert after["msgspec"] == before["msgspec"]
    assert after["scanned"] - before["scanned"] > 0.9 * (len(col.c) + len(col.g))


def _ev(events: list) -> list[Ev]:
    return EVENT_DECODER.decode(msgspec.json.encode(events))


@pytest.mark.parametrize("batch", [1, 4, 100])
def test_the_odd_events_of_test_exact(batch):
    evs = _ev(EDGE)
    for kw in ({}, {"keep_python": True, "launch_kernels": True}):
        c, py = both([evs[i : i + batch] for i in range(0, len(evs), batch)], **kw)
        assert full_state(c) == full_state(py)


# args as bytes, each taking one of the scanner's ways
ODD_ARGS = [
    b'{ "External id" : 3 ,\n\t"Input Dims" :  [ [1, 2] ] , "Input type":["float"] }',  # blanks
    b'{"External id": 3, "Input Dims": [[1, 2]], "Input type": ["float"]}',  # same key, other blanks
    b'{"External\\u0020id": 4, "Input Dims": [[1, 2]]}',  # an escaped key
    b'{"Input Dims": [[1]], "Input Dims": [[2]]}',  # a duplicate key (msgspec keeps the last)
    b'{"External id": 1e3}',
    b'{"External id": 123456789012345678901234}',
    b'{"External id": 1234567890123456789}',  # 19 digits, int64
    b'{"External id": 9223372036854775807}',
    b'{"External id": -9223372036854775807}',
    b'{"External id": -0, "Sequence number": 0}',
    b'{"External id": null}',
    b'{"External id": 1.5}',
    b'{"External id": true}',
    b'{"Concrete Inputs": ["\\u00e9", "a\\"b", "\xc3\xa9"]}',  # escapes, non-ASCII
    b'{"Concrete Inputs": ["\xff"]}',  # invalid UTF-8
    b'{"Input Dims": [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}',
    b'{"Input Dims": [1e400, -1.25E-3, 0.5, 10]}',
    b'{"finished": true, "Ev Idx": 3, "Record function id": 9, "Fwd thread id": 2}',
    b'{"extra key": {"a": [1, {"b": null}]}}',  # an unknown key: the exact path
    b'{"correlation": 11, "External id": 3, "kernel": "k\\"1"}',
    b'{"correlation": 12, "external id": 5, "kernel": "k\xc3\xa91"}',
    b'{"correlation": 13, "kernel": null, "stream": "s7", "device": 1}',
    b'{"correlation": 14, "kernel": 3}',
    b'{"correlation": 15, "kernel": ""}',
    b'{"device": 0, "stream": "7", "correlation": 16, "bytes": 40}',
    b'{"device": null, "stream": null, "correlation": 17}',
    b'{"device": "0", "stream": 1.5}',
    b'{"device": 0, "stream": 7, "Collective name": "allreduce", "correlation": 18}',
    b"{}",
    b"[]",
    b"null",
    b'"x"',
    b"{ }",
]
# Ev built by hand can hold args no decoder would pass as a Raw (the scanner refuses these)
BAD_ARGS = [b'{"correlation": 1,}', b'{"correlation": 01}', b'{"a": [1 2]}', b'{"a": tru}', b"{", b'{"a"}']


def _with_args(raw: bytes) -> list[Ev]:
    evs = _ev(
        [
            _x("cpu_op", "aten::mm", 1, 5),
            _x("cuda_runtime", "cudaLaunchKernel", 2, 1),
            _x("kernel", "gemm", 3, 1, pid=0, tid=7),
            _x("user_annotation", "a", 4, 1, tid=2),
            _x("cuda_driver", "cuLaunchKernel", 5, 1),
            _x("gpu_memset", "Memset", 6, 1),
        ]
    )
    for e in evs:
        e.args = msgspec.Raw(raw)
    return evs


def _run(col: Collector, evs: list, python: bool):
    try:
        (col.add_python if python else col.add)(evs)
    except BadInput as exc:
        return str(exc)
    return None


@pytest.mark.parametrize("raw", ODD_ARGS + BAD_ARGS)
def test_odd_args_read_the_same_both_ways(raw):
    evs = _with_args(raw)
    for kw in ({}, {"keep_python": True, "launch_kernels": True}):
        c, py = Collector("t", **kw), Collector("t", **kw)
        # the first sight interns the args (exact path), the second one finds them
        assert _run(c, evs + evs, False) == _run(py, evs + evs, True)
        assert full_state(c) == full_state(py)


# an event an exact path refuses, and the batch around it (four good events before, one after)
BAD_EVENTS = [
    _x("cpu_op", "aten::mm", 1, -2),
    {"ph": "X", "cat": "kernel", "name": "k", "ts": 1},
    _x("kernel", "k", 1, 2),
    _x("cuda_runtime", "cudaLaunchKernel", 1, 1, {"correlation": "x"}),
]


def around(bad) -> list:
    events = [_x("cpu_op", "aten::mm", 0, 1), _x("kernel", "k", 0, 1, {"device": 0, "stream": 1})] * 2 + [bad]
    return events + [_x("cpu_op", "aten::after", 9, 1)]


@pytest.mark.parametrize("bad", BAD_EVENTS)
def test_an_error_leaves_the_same_state_both_ways(bad):
    events = around(bad)
    c, py = Collector("t.json"), Collector("t.json")
    assert _run(c, _ev(events), False) == _run(py, _ev(events), True) is not None
    assert full_state(c) == full_state(py) and c.n_events == 5


def test_the_codes_in_use_are_schema_s():
    from perfreport.read import _collect
    from perfreport.read.schema import C_DRIVER, C_KERNEL, C_RUNTIME

    assert _collect.CODES == (C_RUNTIME, C_DRIVER, C_KERNEL, NONE, kineto._FLOW_HI)


def test_a_batch_that_is_not_a_list_of_ev_takes_the_python_loop():
    class Other(msgspec.Struct):
        ph: str = "X"

    from perfreport.read import _collect

    assert _collect.add(Collector("t"), [Other()]) is False
    assert _collect.add(Collector("t"), tuple(_ev(EDGE))) is False
    c, py = both([_ev(EDGE)[:3] + [Ev(ph="i")]])
    assert full_state(c) == full_state(py)


_ints = st.one_of(
    st.integers(-5, 5),
    st.integers(-(1 << 70), 1 << 70),
    st.sampled_from([NONE, SIDE, NONE + 2, (1 << 63) - 1, 1 << 63, -(1 << 63) - 1]),
)
_scalars = st.one_of(_ints, st.none(), st.booleans(), st.floats(allow_nan=False), st.text(max_size=6))
_values = st.one_of(
    _scalars,
    st.lists(_scalars, max_size=3),
    st.lists(st.lists(_scalars, max_size=3), max_size=2),
    st.dictionaries(st.text(max_size=4), _scalars, max_size=2),
)
_KEYS = [
    "External id",
    "external id",
    "Sequence number",
    "correlation",
    "device",
    "stream",
    "bytes",
    "kernel",
    "Input Dims",
    "Input type",
    "Concrete Inputs",
    "Input Strides",
    "Fwd thread id",
    "Record function id",
    "Ev Idx",
    "finished",
    "Collective name",
    "other",
]


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.dictionaries(st.sampled_from(_KEYS), st.one_of(_ints, _values), max_size=6), min_size=1, max_size=4),
    st.sampled_from([(",", ":"), (", ", ": "), (" ,\n", " :\t")]),
    st.booleans(),
)
def test_generated_args_read_the_same_both_ways(dicts, separators, ascii_only):
    evs = []
    for d in dicts:
        raw = json.dumps(d, separators=separators, ensure_ascii=ascii_only).encode()
        evs += _with_args(raw)
    for kw in ({}, {"launch_kernels": True}):
        c, py = Collector("t", **kw), Collector("t", **kw)
        assert _run(c, evs + evs, False) == _run(py, evs + evs, True)
        assert full_state(c) == full_state(py)
