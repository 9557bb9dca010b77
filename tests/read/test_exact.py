"""The inline loop of Collector.add against the exact per-event paths (perfreport/read/exact.py):
the same columns, codes, interned args, side values and errors, on the fixtures and on events
made to take every fallback."""

from __future__ import annotations

import gzip

import msgspec
import pytest

from perfreport.errors import BadInput
from perfreport.events import NONE, SIDE
from perfreport.read.kineto import Collector
from perfreport.read.schema import EVENT_DECODER
from tests.conftest import FIX

_FIELDS = (
    "names threads devstreams locations flow_ids args_table process_names process_labels thread_names n_events "
    "gpu_comm launch_kernels"
).split()


def state(col: Collector):
    """Everything the reader hands on, as comparable values."""
    tables = [sorted((k, bytes(v) if hasattr(v, "tobytes") else v) for k, v in vars(t).items()) for t in (col.c, col.g)]
    flows = [(bytes(f.id), bytes(f.loc), bytes(f.ts)) for f in (col.flow_s, col.flow_f)]
    ann = [(a.uid, a.name, a.device, a.stream, a.ts, a.dur, a.correlation, a.ext_id) for a in col.gpu_annotations]
    return tables, flows, ann, [getattr(col, k) for k in _FIELDS], sorted(col.repairs.items())


def both(events: list, batch: int = 7, **kw):
    """(inline, exact) Collectors fed the same events in batches of ``batch``."""
    evs = EVENT_DECODER.decode(msgspec.json.encode(events))
    fast, exact = Collector("t", **kw), Collector("t", **kw)
    for i in range(0, len(evs), batch):
        fast.add(evs[i : i + batch])
        exact.add_exact(evs[i : i + batch])
    return fast, exact


@pytest.mark.parametrize(
    "name", ["h100_qwen_0.5b.json.gz", "mi300_qwen_0.5b.json.gz", "vllm_decode_graph.json.gz", "serving_moe_ep.json.gz"]
)
def test_fixtures_read_the_same_both_ways(name):
    doc = msgspec.json.decode(gzip.open(FIX / name).read())
    for kw in ({}, {"keep_python": True, "launch_kernels": True}):
        fast, exact = both(doc["traceEvents"], batch=5000, **kw)
        assert fast.n_events == len(doc["traceEvents"]) and len(fast.c) > 0
        assert state(fast) == state(exact)


def _x(cat, name, ts, dur, args=None, pid=1, tid=1):
    e = {"ph": "X", "cat": cat, "name": name, "pid": pid, "tid": tid, "ts": ts, "dur": dur}
    if args is not None:
        e["args"] = args
    return e


BIG = 1 << 64  # beyond int64: kept in the table's side dict
EDGE = [
    _x("cpu_op", "aten::mm", 1, 5, {"External id": 3, "Input Dims": [[2, 3]], "Input type": ["float"]}),
    _x("cpu_op", "aten::mm", 2, 5, {"External id": 4, "Input Dims": [[2, 3]], "Input type": ["float"]}),  # fast hit
    _x("cpu_op", "aten::mm", 3, 5, {"External id": BIG, "Input Dims": [[2, 3]], "Input type": ["float"]}),
    _x("cpu_op", "aten::mm", 4, 5, {"External id": SIDE, "Input Dims": [[2, 3]], "Input type": ["float"]}),
    _x("cpu_op", "aten::mm", 5, 5, {"External id": NONE, "Sequence number": -1}),
    _x("cpu_op", "aten::mm", 6, 5, {"External id": "7", "Sequence number": 2.0}),  # not ints
    _x("cpu_op", "aten::mm", 7, 5, {"Input Dims": [2, 3], "extra key": {"a": [1]}}),  # unknown key
    _x("cpu_op", "aten::add", 8, 1),  # no args
    _x("user_annotation", "step_1", 0, 50, {"External id": 9}),
    _x("cuda_runtime", "cudaLaunchKernel", 9, 1, {"correlation": 11, "External id": 3, "kernel": "k1"}),
    _x("cuda_runtime", "cudaLaunchKernel", 10, 1, {"correlation": BIG, "external id": 5}),
    _x("cuda_runtime", "cudaLaunchKernel", 11, 1, {"correlation": SIDE}),
    _x("cuda_runtime", "cudaDeviceSynchronize", 12, 1),  # no args
    _x("cuda_driver", "cuLaunchKernel", 13, 1, {"correlation": 12}, tid=2),
    _x("Operator", "aten::old", 14, 1, {"External id": 1}),  # older category spelling
    _x("python_function", "f.py(1): f", 0, 20, {"Python id": 1}),
    _x("kernel", "gemm", 20, 3, {"device": 0, "stream": 7, "correlation": 11, "External id": 3}, pid=0, tid=7),
    _x("kernel", "gemm", 24, 3, {"device": 0, "stream": 7, "correlation": BIG, "bytes": 4}, pid=0, tid=7),
    _x("gpu_memcpy", "Memcpy HtoD", 28, 3, {"device": 0, "stream": 8, "correlation": 12, "bytes": SIDE}, pid=0),
    _x("kernel", "nccl", 32, 3, {"device": 0, "stream": 9, "correlation": 13, "Collective name": "allreduce"}),
    _x("kernel", "nodev", 36, 3, {"correlation": 14}, pid=3, tid=4),  # device/stream from pid/tid
    _x("gpu_user_annotation", "step_1", 20, 30, {"device": 0, "stream": 7}),
    _x("gpu_user_annotation", "bare", 20, 30),
    {"ph": "s", "cat": "ac2g", "id": 11, "pid": 1, "tid": 1, "ts": 9},
    {"ph": "f", "cat": "ac2g", "id": 11, "pid": 0, "tid": 7, "ts": 20},
    {"ph": "f", "cat": "ac2g", "id": "x11", "pid": 0, "tid": 7, "ts": 20},  # non-int id: coded
    {"ph": "f", "cat": "ac2g", "id": 1 << 62, "pid": 0, "tid": 7, "ts": 20},
    {"ph": "s", "cat": "other", "id": 3, "pid": 1, "tid": 1, "ts": 9},  # not a flow kind
    {"ph": "M", "name": "process_name", "pid": 1, "args": {"name": "python3"}},
    {"ph": "M", "name": "thread_name", "pid": 1, "tid": 1, "args": {"name": "main"}},
    {"ph": "i", "cat": "cpu_instant_event", "name": "[memory]", "pid": 1, "tid": 1, "ts": 3},
    _x("Trace", "PyTorch Profiler", 0, 100),
]


@pytest.mark.parametrize("batch", [1, 4, 100])
def test_every_fallback_gives_the_exact_result(batch):
    for kw in ({}, {"keep_python": True, "launch_kernels": True}):
        fast, exact = both(EDGE, batch=batch, **kw)
        assert state(fast) == state(exact)
    c = fast.c
    # the two cpu_op calls with the same arguments share one interned dict; odd ids are kept aside
    assert c.args[0] == c.args[1] >= 0
    assert c.value("ext", 2) == BIG and c.value("ext", 3) == SIDE and c.value("ext", 4) == NONE
    assert c.value("ext", 5) == "7" and c.value("cs", 5) == 2.0
    assert [fast.g.value("corr", r) for r in range(len(fast.g))] == [11, BIG, 12, 13, 14]
    assert fast.g.value("nbytes", 2) == SIDE and 3 in fast.gpu_comm
    assert fast.devstreams[fast.g.ds[4]] == (3, 4)
    assert fast.launch_kernels == {11: ("cudaLaunchKernel", "k1")}
    assert len(fast.flow_s) == 1 and len(fast.flow_f) == 3 and fast.flow_ids == ["x11", 1 << 62]
    assert [a.name for a in fast.gpu_annotations] == ["step_1", "bare"]


@pytest.mark.parametrize(
    "bad,problem",
    [
        (_x("cpu_op", "aten::mm", 1, -2), "negative duration"),
        ({"ph": "X", "cat": "kernel", "name": "k", "ts": 1}, "no ts/dur"),
        (_x("kernel", "k", 1, 2), "no args"),
        (_x("cuda_runtime", "cudaLaunchKernel", 1, 1, {"correlation": "x"}), "malformed args"),
    ],
)
def test_errors_name_the_same_event_both_ways(bad, problem):
    events = [_x("cpu_op", "aten::mm", 0, 1)] * 3 + [bad]
    msgs = []
    for exact in (False, True):
        col = Collector("t.json")
        evs = EVENT_DECODER.decode(msgspec.json.encode(events))
        with pytest.raises(BadInput) as err:
            (col.add_exact if exact else col.add)(evs)
        msgs.append(str(err.value))
    assert msgs[0] == msgs[1] and "traceEvents[3]" in msgs[0] and problem in msgs[0]
