"""``fix_first``: every figure is reproducible from the rows it names; the ranking is honest."""

from __future__ import annotations

import pytest

from perfreport.pipeline import analyze
from perfreport.tables.fix_first import fix_first
from perfreport.tables.sheet import Sheet
from tests.conftest import FIX
from tests.kit.cached import analyzed

UNI = [
    "name",
    "category",
    "time sum (µs)",
    "roofline time (µs)",
    "roofline time min (µs)",
    "roofline time max (µs)",
    "roofline mean (%)",
    "flags",
]


def _timeline(total_ms, exposed_comm_ms=0.0):
    return Sheet(
        "gpu_timeline",
        ["device", "type", "time (ms)", "percent of total (%)"],
        [[0, "total", total_ms, 100.0], [0, "exposed comm", exposed_comm_ms, 0.0]],
    )


def test_wins_by_hand_and_bounds_sort_by_their_lower_bound():
    uni = Sheet(
        "unified_perf_summary",
        UNI,
        [
            # 1000 µs at roofline 400: won = 1000 - 400/0.8 = 500
            ["gemm", "GEMM", 1000.0, 400.0, 400.0, 400.0, 40.0, ""],
            # bounds 100 ... 700: won 1000 - 500 = 500 at the point, 125 ... 875: sorts by 125
            ["moe", "MoE", 1000.0, 400.0, 100.0, 700.0, 40.0, ""],
            # already at 90% of roofline: nothing to win at 80%
            ["fast", "GEMM", 100.0, 90.0, 90.0, 90.0, 90.0, ""],
            # suspect inputs: sorted by the lower bound (= the point here) and said so
            ["odd", "SDPA_fwd", 300.0, 100.0, 100.0, 100.0, 33.0, "model inputs suspect: ..."],
        ],
    )
    s = fix_first(_timeline(5.0, exposed_comm_ms=0.3), uni, None, 0.8)
    recs = s.records()
    by = {r["what"].split(" ")[0]: r for r in recs}
    assert by["gemm"]["won (µs)"] == pytest.approx(500)
    assert (by["moe"]["won min (µs)"], by["moe"]["won max (µs)"]) == (pytest.approx(125), pytest.approx(875))
    assert "fast" not in by
    assert by["odd"]["won (µs)"] == pytest.approx(175) and "suspect" in by["odd"]["caveat"]
    assert [r["what"].split(" ")[0] for r in recs] == ["gemm", "GPU", "odd", "moe"]  # 500, 300, 175, 125
    assert by["gemm"]["share of run (%)"] == pytest.approx(10.0)  # 500 of 5000 µs
    assert [r["priority"] for r in recs] == [1, 2, 3, 4]


@pytest.mark.parametrize("name", ["h100_qwen_0.5b.json.gz", "mi300_qwen_0.5b.json.gz", "vllm_decode_graph.json.gz"])
def test_every_figure_comes_from_the_row_it_names(name):
    r = analyzed(str(FIX / name))
    uni = r.sheet("unified_perf_summary").records()
    idle = {i["device"]: i for i in r.sheet("idle_time").records() if i["stream"] == "all"}
    tl = r.sheet("gpu_timeline").records()
    for f in r.sheet("fix_first").records():
        if f["kind"] == "roofline gap":
            n = int(f["evidence"].split(" row ", 1)[1].split(":", 1)[0])  # 1-based row of the sheet
            u = uni[n - 1]
            assert f["what"].startswith(u["name"])
            assert f["won (µs)"] == pytest.approx(max(0.0, u["time sum (µs)"] - u["roofline time (µs)"] / 0.8))
        elif f["kind"] == "host wait":
            dev = int(f["what"].split()[1])
            assert f["won max (µs)"] == pytest.approx(idle[dev]["host wait (µs)"])
        else:
            dev = int(f["what"].split()[1].rstrip(":"))
            kind = "exposed comm" if "communication" in f["kind"] else "exposed memcpy"
            ms = [t["time (ms)"] for t in tl if t["device"] == dev and t["type"] == kind][0]
            assert f["won max (µs)"] == pytest.approx(1000 * ms)
    ranks = [f["priority"] for f in r.sheet("fix_first").records()]
    assert ranks == list(range(1, len(ranks) + 1))


def test_target_is_adjustable_and_checked(tmp_path):
    a = analyzed(str(FIX / "h100_qwen_0.5b.json.gz"), target_roofline=0.5)
    top = a.sheet("fix_first").records()[0]
    assert "to 50% of roofline" in top["what"]
    from perfreport.errors import BadInput

    with pytest.raises(BadInput, match="target-roofline"):
        analyze(str(FIX / "h100_qwen_0.5b.json.gz"), target_roofline=float("nan"))
