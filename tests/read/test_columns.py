"""The reader's typed columns (perfreport/read/columns.py): int64 values kept as is, no value as
NONE, anything else (beyond int64, text) in the side dict, read back exactly."""

from __future__ import annotations

import json

from perfreport.events import NONE, SIDE
from perfreport.read import read_trace
from perfreport.read.columns import INT64_HI, INT64_LO, CpuColumns


def test_side_values_round_trip(tmp_path):
    big = 2**70  # beyond int64: kept in the side dict
    ev = [
        {
            "ph": "X",
            "cat": "cpu_op",
            "name": "a",
            "pid": 1,
            "tid": 1,
            "ts": 0,
            "dur": 5,
            "args": {"External id": 7, "Sequence number": big},
        },
        {
            "ph": "X",
            "cat": "cpu_op",
            "name": "b",
            "pid": 1,
            "tid": 1,
            "ts": 1,
            "dur": 1,
            "args": {"External id": "x-3"},
        },  # not an int
        {
            "ph": "X",
            "cat": "cuda_runtime",
            "name": "cudaLaunchKernel",
            "pid": 1,
            "tid": 1,
            "ts": 2,
            "dur": 1,
            "args": {"correlation": INT64_HI},
        },  # the largest kept as is
        {
            "ph": "X",
            "cat": "kernel",
            "name": "k",
            "pid": 0,
            "tid": 7,
            "ts": 3,
            "dur": 1,
            "args": {"device": 0, "stream": 7, "correlation": big},
        },
    ]
    p = tmp_path / "t.json"
    p.write_text(json.dumps({"traceEvents": ev}))
    col = read_trace(str(p)).records
    c, g = col.c, col.g
    assert list(c.ext) == [7, SIDE, NONE] and list(c.cs) == [SIDE, NONE, INT64_HI]
    assert c.value("cs", 0) == big and c.value("ext", 1) == "x-3" and c.value("ext", 2) is None
    assert g.corr[0] == SIDE and g.value("corr", 0) == big and g.value("nbytes", 0) is None
    ops = col.cpu
    assert (ops[0].ext_id, ops[0].seq, ops[1].ext_id, ops[2].correlation) == (7, big, "x-3", INT64_HI)


def test_sentinels_sit_below_the_kept_range():
    assert SIDE < INT64_LO and NONE < INT64_LO and INT64_HI == 2**63 - 1
    assert len(CpuColumns()) == 0
