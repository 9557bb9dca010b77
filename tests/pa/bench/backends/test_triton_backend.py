"""pa/bench/backends/triton_backend.py: our kernel as a backend: skipped without a GPU unless the
Triton interpreter is on, a case too wide for its tile is a skipped row, the partitions and
workspace it plans and the arguments of its one launch (the kernel itself: tests/pa/kernel/)."""

from __future__ import annotations

import pytest
from perfreport.pa.bench.backends import Skip, SkipRow
from perfreport.pa.bench.backends.triton_backend import MAX_ROWS, prepare
from tests.pa.bench.backends.kit import CPU, case_and_inputs


def test_no_gpu_and_no_interpreter_is_a_skip(monkeypatch):
    monkeypatch.delenv("TRITON_INTERPRET", raising=False)
    case, inp = case_and_inputs()
    with pytest.raises(Skip, match="no GPU and TRITON_INTERPRET is not 1"):
        prepare(inp, case, CPU)


def test_more_query_rows_than_the_tile_is_a_skipped_row(monkeypatch):
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    case, inp = case_and_inputs(q_len=MAX_ROWS // 4 + 1, q_heads=4, kv_heads=1, context=MAX_ROWS)
    with pytest.raises(
        SkipRow, match=f"= {4 * (MAX_ROWS // 4 + 1)} query rows per KV head; the kernel's tile holds at most {MAX_ROWS}"
    ):
        prepare(inp, case, CPU)


def test_auto_partitions_get_a_workspace_and_one_launch_passes_the_case(monkeypatch):
    import perfreport.pa.kernel.host as host

    monkeypatch.setenv("TRITON_INTERPRET", "1")
    seen = {}
    monkeypatch.setattr(host, "decode_partitions", lambda *a, **kw: 3)
    monkeypatch.setattr(host, "make_workspace", lambda *a: seen.setdefault("ws", a))
    monkeypatch.setattr(host, "paged_attention_decode", lambda *a, **kw: seen.setdefault("call", (a, kw)))
    case, inp = case_and_inputs(q_len=2, q_heads=4, kv_heads=2, kv_dtype="fp8")
    p = prepare(inp, case, {"on_gpu": False, "partitions": "auto", "fp8_mma": "fp8"})
    assert (p.partitions, p.note, p.out.shape) == ("3", "FP8 MMAs (fp8)", (4, 4, 32))
    assert seen["ws"][:5] == (2, 2, 4, 32, 3)  # sequences, KV heads, q_len x H_Q/H_KV rows, Dv, partitions
    p.run()
    args, kw = seen["call"]
    assert args[0] is inp.query and kw["num_partitions"] == 3 and kw["out"] is p.out
    assert (kw["layout"], kw["max_context"], kw["min_context"], kw["q_len"], kw["fp8_mma"], kw["partials"]) == (
        "NHD",
        40,
        40,
        2,
        "fp8",
        "fp32",
    )
