"""Trace documents shared by the tests of the reader (tests/read)."""

from __future__ import annotations

import json


def events():
    return [
        {
            "ph": "X",
            "cat": "cpu_op",
            "name": "aten::mm",
            "pid": 1,
            "tid": 1,
            "ts": 10.0,
            "dur": 5.0,
            "args": {
                "External id": 7,
                "Input Dims": [[4, 8], [8, 2]],
                "Input type": ["float", "float"],
                "note": "tricky }, { inside a string",
                "nested": {"a": {"b": 1}, "c": [{"d": 2}, {"e": 3}]},
            },
        },
        {
            "ph": "X",
            "cat": "cuda_runtime",
            "name": "cudaLaunchKernel",
            "pid": 1,
            "tid": 1,
            "ts": 11.0,
            "dur": 1.0,
            "args": {"correlation": 99},
        },
        {
            "ph": "X",
            "cat": "python_function",
            "name": "foo.py(1): f",
            "pid": 1,
            "tid": 1,
            "ts": 9.0,
            "dur": 8.0,
            "args": {"Python id": 1},
        },
        {
            "ph": "X",
            "cat": "kernel",
            "name": "gemm_kernel",
            "pid": 0,
            "tid": 7,
            "ts": 20.0,
            "dur": 3.5,
            "args": {"device": 0, "stream": 7, "correlation": 99},
        },
        {"ph": "X", "cat": "xpu_mystery", "name": "unknown kind", "pid": 5, "tid": 5, "ts": 1.0, "dur": 1.0},
        {"ph": "M", "name": "process_name", "pid": 1, "tid": 0, "args": {"name": "python3"}},
    ]


def doc(order="first", indent=None, extra_meta=True):
    meta = {
        "schemaVersion": 1,
        "deviceProperties": [{"id": 0, "name": "NVIDIA H100 80GB HBM3"}],
        "baseTimeNanoseconds": 1700000000000000000,
        "traceName": "t",
        "distributedInfo": {"rank": 3},
    }
    d = {}
    if order == "first":
        d["traceEvents"] = events()
        d.update(meta)
    else:
        d["metadata"] = {"x": {"y": [1, 2, {"z": 3}]}}
        d.update(meta)
        d["traceEvents"] = events()
    return json.dumps(d, indent=indent).encode()


def nasty_doc() -> bytes:
    """Strings holding '},' and '"]', escaped quotes and backslashes, nested args objects."""
    ev = []
    for i in range(40):
        ev.append(
            {
                "ph": "X",
                "cat": "cpu_op",
                "name": f'op }},{{ "]\\\\ \\" {i} é',
                "pid": 1,
                "tid": 1,
                "ts": 10.0 * i,
                "dur": 5.0,
                "args": {"External id": i, "nested": {"a": {"b": [1, {"c": "},"}]}}, "s": "\\" * (i % 4)},
            }
        )
        ev.append(
            {
                "ph": "X",
                "cat": "kernel",
                "name": f"k{i}\\",
                "pid": 0,
                "tid": 7,
                "ts": 10.0 * i + 1,
                "dur": 2.0,
                "args": {"device": 0, "stream": 7, "correlation": i},
            }
        )
    return json.dumps(
        {
            "metadata": {"x": [{"y": "},"}]},
            "traceEvents": ev,
            "deviceProperties": [{"name": "NVIDIA H100 80GB HBM3"}],
            "traceName": "]}",
        },
        indent=1,
    ).encode()


def x_event(cat, name, ts, dur, pid=1, tid=1, **args):
    """One complete ("X") event."""
    return {"ph": "X", "cat": cat, "name": name, "pid": pid, "tid": tid, "ts": ts, "dur": dur, "args": args}


def read_and_build(tmp_path, events):
    """Write ``events`` as a trace, read it and build its tree; ``raw.counts`` keeps the
    reader's (cpu, gpu) record counts from before build_tree frees the columns."""
    from perfreport.read import read_trace
    from perfreport.tree import build_tree

    p = tmp_path / "t.json"
    p.write_text(json.dumps({"traceEvents": events}))
    raw = read_trace(str(p))
    raw.counts = (raw.records.n_cpu, raw.records.n_gpu)
    return raw, build_tree(raw)
