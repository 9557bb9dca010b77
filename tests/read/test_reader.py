"""Reader: gzip by content, stdin, key order, whitespace, splitter boundaries, metadata."""
from __future__ import annotations

import gzip
import json
import subprocess
import sys

import pytest

from perfreport.errors import BadInput
from perfreport.read import read_trace
from tests.conftest import FIX


def _events():
    return [
        {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 10.0, "dur": 5.0,
         "args": {"External id": 7, "Input Dims": [[4, 8], [8, 2]], "Input type": ["float", "float"],
                  "note": "tricky }, { inside a string", "nested": {"a": {"b": 1}, "c": [{"d": 2}, {"e": 3}]}}},
        {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 11.0,
         "dur": 1.0, "args": {"correlation": 99}},
        {"ph": "X", "cat": "python_function", "name": "foo.py(1): f", "pid": 1, "tid": 1, "ts": 9.0, "dur": 8.0,
         "args": {"Python id": 1}},
        {"ph": "X", "cat": "kernel", "name": "gemm_kernel", "pid": 0, "tid": 7, "ts": 20.0, "dur": 3.5,
         "args": {"device": 0, "stream": 7, "correlation": 99}},
        {"ph": "X", "cat": "xpu_mystery", "name": "unknown kind", "pid": 5, "tid": 5, "ts": 1.0, "dur": 1.0},
        {"ph": "M", "name": "process_name", "pid": 1, "tid": 0, "args": {"name": "python3"}},
    ]


def _doc(order="first", indent=None, extra_meta=True):
    meta = {"schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "NVIDIA H100 80GB HBM3"}],
            "baseTimeNanoseconds": 1700000000000000000, "traceName": "t", "distributedInfo": {"rank": 3}}
    d = {}
    if order == "first":
        d["traceEvents"] = _events()
        d.update(meta)
    else:
        d["metadata"] = {"x": {"y": [1, 2, {"z": 3}]}}
        d.update(meta)
        d["traceEvents"] = _events()
    return json.dumps(d, indent=indent).encode()


@pytest.mark.parametrize("order", ["first", "last"])
@pytest.mark.parametrize("indent", [None, 2])
def test_key_order_and_whitespace(tmp_path, order, indent):
    p = tmp_path / "t.json"
    p.write_bytes(_doc(order, indent))
    raw = read_trace(str(p))
    assert raw.meta["deviceProperties"][0]["name"] == "NVIDIA H100 80GB HBM3"
    assert raw.meta["distributedInfo"] == {"rank": 3}
    assert raw.meta["baseTimeNanoseconds"] == 1700000000000000000
    assert "traceEvents" not in raw.meta
    col = raw.records
    assert [o.name for o in col.cpu] == ["aten::mm", "cudaLaunchKernel"]  # python_function dropped
    assert col.cpu[0].args["Input Dims"] == [[4, 8], [8, 2]]
    assert col.cpu[0].args["nested"]["c"][1] == {"e": 3}
    assert col.cpu[0].ext_id == 7 and "External id" not in col.cpu[0].args
    assert len(col.gpu) == 1 and col.gpu[0].correlation == 99 and col.gpu[0].stream == 7
    assert col.process_names == {1: "python3"}


def test_gzip_detected_by_content_not_name(tmp_path):
    gz = tmp_path / "looks_plain.json"
    gz.write_bytes(gzip.compress(_doc()))
    plain = tmp_path / "looks_gz.json.gz"
    plain.write_bytes(_doc())
    a, b = read_trace(str(gz)), read_trace(str(plain))
    assert a.records.n_events == b.records.n_events == 6


def test_many_small_chunks_split_correctly(tmp_path, monkeypatch):
    """Force tiny reads so cuts land inside strings and nested objects; result must not change."""
    import perfreport.read.source as source
    p = tmp_path / "t.json"
    p.write_bytes(_doc("last", 1))
    ref = read_trace(str(p))
    monkeypatch.setattr(source, "CHUNK", 37)
    got = read_trace(str(p))
    assert [o.name for o in got.records.cpu] == [o.name for o in ref.records.cpu]
    assert got.records.cpu[0].args == ref.records.cpu[0].args
    assert got.meta == ref.meta


def test_real_trace_chunked_equals_whole(monkeypatch):
    import perfreport.read.source as source
    path = str(FIX / "mi210_gpu_only.json.gz")
    whole = read_trace(path)
    monkeypatch.setattr(source, "CHUNK", 4096)
    small = read_trace(path)
    assert small.records.n_events == whole.records.n_events == 2443
    assert [g.dur for g in small.records.gpu] == [g.dur for g in whole.records.gpu]


def test_stdin(tmp_path):
    data = gzip.compress(_doc())
    code = ("from perfreport.read import read_trace; r = read_trace('-'); "
            "print(r.source, r.records.n_events, len(r.records.gpu))")
    out = subprocess.run([sys.executable, "-c", code], input=data, capture_output=True, check=True)
    assert out.stdout.decode().split() == ["<stdin>", "6", "1"]


def test_interned_args_are_shared():
    raw = read_trace(str(FIX / "h100_qwen_0.5b.json.gz"))
    ops = [o for o in raw.records.cpu if o.cat == "cpu_op"]
    distinct = {id(o.args) for o in ops}
    assert len(ops) == 4186
    assert len(distinct) < 200      # identical argument sets share one dict


def test_missing_traceevents(tmp_path):
    p = tmp_path / "t.json"
    p.write_text('{"schemaVersion": 1}')
    with pytest.raises(BadInput, match="no traceEvents"):
        read_trace(str(p))


def _x(cat, name, ts, dur, pid=1, tid=1, **args):
    return {"ph": "X", "cat": cat, "name": name, "pid": pid, "tid": tid, "ts": ts, "dur": dur, "args": args}


def _tree(tmp_path, events):
    from perfreport.tree import build_tree
    p = tmp_path / "t.json"
    p.write_text(json.dumps({"traceEvents": events}))
    raw = read_trace(str(p))
    raw.counts = (raw.records.n_cpu, raw.records.n_gpu)    # before build_tree frees the columns
    return raw, build_tree(raw)


def test_columns_then_only_what_the_report_needs(tmp_path):
    """The reader keeps columns; the tree makes records for launches, their ancestors and
    annotations, and leaves out kernel-less ops and runtime calls that launch nothing."""
    ev = [
        _x("user_annotation", "step_1", 0, 200),
        _x("cpu_op", "aten::linear", 10, 100, **{"External id": 3, "Input Dims": [[2, 4]]}),
        _x("cpu_op", "aten::t", 12, 2),                                    # no kernel: dropped
        _x("cuda_runtime", "cudaFuncSetAttribute", 14, 1, correlation=8),  # launches nothing
        _x("cpu_op", "aten::addmm", 20, 50, **{"Sequence number": 9}),
        _x("cuda_runtime", "cudaLaunchKernel", 30, 5, correlation=1),
        _x("cpu_op", "aten::empty", 120, 5),                               # no kernel: dropped
        _x("kernel", "gemm", 300, 10, pid=0, tid=7, device=0, stream=7, correlation=1),
    ]
    raw, t = _tree(tmp_path, ev)
    assert raw.counts == (7, 1) and t.n_events == 8
    # the launch call inside aten::addmm gets no record: its kernel links to addmm directly
    assert [o.name for o in t.ops] == ["step_1", "aten::linear", "aten::addmm"]
    assert [o.uid for o in t.ops] == [0, 1, 2]
    ann, linear, addmm = t.ops
    assert t.roots == [ann] and linear.parent is ann and addmm.parent is linear
    assert ann.children == (linear,) and linear.children == (addmm,) and addmm.children is None
    assert addmm.kernels == t.gpu
    assert t.gpu[0].op is addmm and t.gpu[0].launcher is addmm
    assert t.gpu[0].launch_name == "cudaLaunchKernel"
    assert linear.subtree_kernels() == t.gpu and linear.kernels is None
    # scalar fields read from the shared columns
    assert (linear.ts, linear.dur, linear.end, linear.pid, linear.tid) == (10.0, 100.0, 110.0, 1, 1)
    assert linear.ext_id == 3 and linear.seq is None and linear.correlation is None
    assert linear.args == {"Input Dims": [[2, 4]]}
    assert addmm.seq == 9 and addmm.correlation is None
    g = t.gpu[0]
    assert (g.ts, g.dur, g.correlation, g.ext_id, g.nbytes, g.device, g.stream) == (300.0, 10.0, 1, None, None, 0, 7)
    g.dur = 4.0                                   # a record can still be edited
    assert g.dur == 4.0 and g.ts == 300.0 and g.correlation == 1


def test_cpu_only_trace_keeps_every_cpu_event(tmp_path):
    ev = [_x("cpu_op", "aten::linear", 10, 100), _x("cpu_op", "aten::t", 12, 2),
          _x("cuda_runtime", "cudaFuncSetAttribute", 14, 1, correlation=8)]
    _, t = _tree(tmp_path, ev)
    assert [o.name for o in t.ops] == ["aten::linear", "aten::t", "cudaFuncSetAttribute"]
    assert [o.parent.name for o in t.ops[1:]] == ["aten::linear", "aten::linear"]
    assert t.ops[2].correlation == 8


def test_tree_consumes_the_raw_trace(tmp_path):
    from perfreport.tree import build_tree
    raw, _ = _tree(tmp_path, [_x("cpu_op", "a", 0, 1)])
    with pytest.raises(ValueError, match="already consumed"):
        build_tree(raw)
