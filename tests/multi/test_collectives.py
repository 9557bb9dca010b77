"""Collective calls matched across ranks: skew, straggler, bandwidths, on generated fragments.

Fragment timing (scripts/make_rank_traces.py): call i (0-based) of 4 ranks, rank r arrives
(3 + i % 3) * r µs after rank 0; every kernel ends 20 + 50 µs after the last arrival, so the
transfer time is 50 µs. Message: 4 Mi bf16 elements = 4,194,304 * 2 = 8,388,608 B.
  algbw = 8,388,608 B / 50 µs = 167,772.16 B/µs = 167.77216 GB/s
  busbw (all-reduce, n = 4) = 167.77216 * 2 * 3 / 4 = 251.65824 GB/s; of H100 NVLink 450 GB/s
  per direction: 55.9240533...%
"""

from __future__ import annotations

import pytest

from perfreport.multi import analyze_ranks
from perfreport.multi.collectives import busbw_factor

from rank_fragments import write_fragments


def _calls(report):
    return report.sheet("collectives").records()


def test_skew_straggler_and_bandwidth_from_known_offsets(tmp_path):
    # rank r's baseTimeNanoseconds is r * 7.5 µs later (ts shifted back to the same instants):
    # the alignment by baseTimeNanoseconds must undo it exactly
    paths = []
    for r in range(4):
        paths += write_fragments(tmp_path / f"r{r}", 4, base_shift_ns=7500 * r)[r : r + 1]
    rep = analyze_ranks([str(p) for p in paths], jobs=1)
    rows = _calls(rep)
    assert [r["seq"] for r in rows] == [1, 2, 3]
    for i, row in enumerate(rows):
        assert row["ranks seen"] == row["group size"] == 4
        assert row["start skew (µs)"] == pytest.approx((3 + i % 3) * 3, abs=1e-6)  # rank 3 - rank 0
        assert row["straggler rank"] == 3
        assert [row[f"rank {r} arrival (µs)"] for r in range(4)] == pytest.approx(
            [(3 + i % 3) * r for r in range(4)], abs=1e-6
        )
        assert row["transfer time (µs)"] == pytest.approx(50.0, abs=1e-6)
        assert row["time min (µs)"] == pytest.approx(50.0, abs=1e-6)  # the straggler's kernel
        assert row["message size (B)"] == 8_388_608
        assert row["algbw (GB/s)"] == pytest.approx(167.77216, rel=1e-7)
        assert row["busbw factor"] == pytest.approx(1.5)
        assert row["busbw (GB/s)"] == pytest.approx(251.65824, rel=1e-7)
        assert row["link (GB/s per direction)"] == 450.0
        assert row["busbw of link (%)"] == pytest.approx(100 * 251.65824 / 450, rel=1e-7)


def test_without_seq_the_nth_call_of_each_group_is_matched(tmp_path):
    write_fragments(tmp_path / "d", 2, seq=False, extra_pg=True)
    rep = analyze_ranks(str(tmp_path / "d"), jobs=1)
    rows = _calls(rep)
    assert any("n-th call" in n for n in rep.sheet("collectives").notes)
    assert sorted((r["process group"], r["seq"]) for r in rows) == [("0", 1), ("0", 2), ("0", 3), ("1", 1)]
    assert all(r["ranks seen"] == 2 for r in rows)


def test_two_groups_with_the_same_seq_stay_apart(tmp_path):
    write_fragments(tmp_path / "d", 2, extra_pg=True)
    rows = _calls(analyze_ranks(str(tmp_path / "d"), jobs=1))
    assert sorted((r["process group"], r["pg description"], r["seq"]) for r in rows) == [
        ("0", "default_pg", 1),
        ("0", "default_pg", 2),
        ("0", "default_pg", 3),
        ("1", "tp", 1),
    ]


def test_a_call_missing_on_one_rank_is_reported(tmp_path):
    d = tmp_path / "d"
    write_fragments(d, 2)
    write_fragments(tmp_path / "e", 2, drop_call=1)[1].replace(d / "rank1.json")
    rep = analyze_ranks(str(d), jobs=1)
    by_seq = {r["seq"]: r for r in _calls(rep)}
    assert by_seq[2]["ranks seen"] == 1 and by_seq[2]["straggler rank"] == 0
    assert by_seq[2]["start skew (µs)"] == 0.0
    assert any("fewer ranks than their group size" in n for n in rep.sheet("collectives").notes)


def test_busbw_factors_of_nccl_tests():
    assert busbw_factor("allreduce", 8) == pytest.approx(2 * 7 / 8)
    assert busbw_factor("allreduce_coalesced", 2) == pytest.approx(1.0)
    for name in (
        "reduce_scatter",
        "_reduce_scatter_base",
        "allgather",
        "_allgather_base",
        "allgather_into_tensor_coalesced",
        "all_to_all",
        "alltoall_base",
    ):
        assert busbw_factor(name, 4) == pytest.approx(3 / 4), name
    for name in ("broadcast", "reduce", "send", "recv"):
        assert busbw_factor(name, 4) == 1.0
    assert busbw_factor("barrier", 4) is None


def test_calls_read_from_kernel_args_without_record_param_comms(tmp_path):
    write_fragments(tmp_path / "ops", 4)
    write_fragments(tmp_path / "kernels", 4, kernels_only=True)
    with_ops = _calls(analyze_ranks(str(tmp_path / "ops"), jobs=1))
    rep = analyze_ranks(str(tmp_path / "kernels"), jobs=1)
    cols = [
        "seq",
        "ranks seen",
        "start skew (µs)",
        "straggler rank",
        "transfer time (µs)",
        "message size (B)",
        "busbw (GB/s)",
    ]
    assert [[r[c] for c in cols] for r in _calls(rep)] == [[r[c] for c in cols] for r in with_ops]
    assert any("read from NCCL/RCCL kernel args" in n for n in rep.sheet("collectives").notes)


def test_record_param_comms_dtype_names():
    # c10::ScalarType names as record_param_comms records them -> bytes per element
    from perfreport.models.dtypes import bytes_per_element

    sizes = {
        "BFloat16": 2,
        "Half": 2,
        "Float": 4,
        "Double": 8,
        "Long": 8,
        "Int": 4,
        "Short": 2,
        "Byte": 1,
        "Char": 1,
        "Bool": 1,
        "Float8_e4m3fn": 1,
        "Float8_e4m3fnuz": 1,
        "ComplexFloat": 8,
    }
    assert {k: bytes_per_element(k) for k in sizes} == sizes


def test_stragglers_by_step(tmp_path):
    # the fragments' three all-reduces, rank 3 last in each with skews 9, 12, 15 µs (see the top);
    # ProfilerStep#0 holds the launches of calls 0 and 1 on every rank, ProfilerStep#1 call 2
    import json

    paths = write_fragments(tmp_path / "d", 4)
    for p in paths:
        doc = json.loads(p.read_text())
        ev = doc["traceEvents"]
        comm = sorted(e["ts"] for e in ev if e.get("name") == "record_param_comms")
        t0 = min(e["ts"] for e in ev if "ts" in e and e.get("ph") == "X")
        t1 = max(e["ts"] + e.get("dur", 0) for e in ev if e.get("ph") == "X")
        for n, (a, b) in enumerate([(t0 - 1, comm[2] - 0.5), (comm[2] - 0.5, t1 + 1)]):
            ev.append(
                {
                    "ph": "X",
                    "cat": "user_annotation",
                    "name": f"ProfilerStep#{n}",
                    "pid": 1,
                    "tid": 1,
                    "ts": a,
                    "dur": b - a,
                    "args": {},
                }
            )
        p.write_text(json.dumps(doc))
    rep = analyze_ranks([str(p) for p in paths], jobs=1)
    s0, s1 = rep.sheet("stragglers_by_step").records()
    assert (s0["step"], s0["collective calls"], s0["straggler rank"], s0["times last"]) == (0, 2, 3, 2)
    assert s0["skew sum (µs)"] == pytest.approx(9 + 12) and s0["skew max (µs)"] == pytest.approx(12)
    assert s0["straggler skew (µs)"] == pytest.approx(21)
    assert (s1["step"], s1["collective calls"], s1["skew sum (µs)"]) == (1, 1, pytest.approx(15))
