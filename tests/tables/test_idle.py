"""Idle split, launch statistics, queue depth and steps, worked out by hand on a small trace.

The trace (µs; one GPU, stream 7; ops on one CPU thread):

    ProfilerStep#3 [0, 39)   op A [0, 8)    launch [1, 6)     -> K1 [10, 20)
                             op B [30, 38)  launch [31, 36)   -> K2 [40, 50)
    ProfilerStep#4 [40, 80)  op C [45, 48)  launch [45.5, 47.5) -> K3 [60, 61)
                             K4 [70, 75): no launch in the trace (unlinked)

Device gaps: [20, 40): nothing queued until 31 -> host wait 11, then K2 queued -> GPU wait 9;
[50, 60): K3 launched at 45.5 <= 50 -> GPU wait 10; [61, 70): the closing K4 has no launch and
nothing later is known -> unknown 9. Idle 39 = 65 total - 26 busy.
"""

from __future__ import annotations

import json

import pytest

from perfreport.pipeline import analyze, load_tree
from perfreport.tables.gpu_arrays import gpu_arrays
from perfreport.tables.idle import idle_time
from perfreport.tables.launches import launch_queue, launch_stats
from perfreport.tables.steps import steps_sheet
from perfreport.tables.timeline import gpu_timeline
from tests.conftest import FIX


def X(cat, name, ts, dur, pid=1, tid=1, **args):
    return {"ph": "X", "cat": cat, "name": name, "pid": pid, "tid": tid, "ts": ts, "dur": dur, "args": args}


def K(name, ts, dur, corr=None):
    args = {"device": 0, "stream": 7}
    if corr is not None:
        args["correlation"] = corr
    return X("kernel", name, ts, dur, pid=0, tid=7, **args)


EVENTS = [
    X("user_annotation", "ProfilerStep#3", 0, 39),
    X("cpu_op", "aten::a", 0, 8),
    X("cuda_runtime", "cudaLaunchKernel", 1, 5, correlation=1),
    K("k1", 10, 10, 1),
    X("cpu_op", "aten::b", 30, 8),
    X("cuda_runtime", "cudaLaunchKernel", 31, 5, correlation=2),
    K("k2", 40, 10, 2),
    X("user_annotation", "ProfilerStep#4", 40, 40),
    X("cpu_op", "aten::c", 45, 3),
    X("cuda_runtime", "cudaLaunchKernel", 45.5, 2, correlation=3),
    K("k3", 60, 1, 3),
    K("k4", 70, 5),
]


@pytest.fixture
def trace(tmp_path):
    p = tmp_path / "t.json"
    p.write_text(json.dumps({"traceEvents": EVENTS}))
    return str(p)


def test_idle_split_by_hand(trace):
    tree = load_tree(trace)
    (row,) = idle_time(gpu_arrays(tree)).records()
    assert row["gaps"] == 3
    assert row["idle (µs)"] == pytest.approx(39)
    assert row["host wait (µs)"] == pytest.approx(11)
    assert row["GPU wait (µs)"] == pytest.approx(19)
    assert row["unknown (µs)"] == pytest.approx(9)
    idle = [r for r in gpu_timeline(tree).records() if r["type"] == "idle"][0]["time (ms)"]
    assert 1000 * idle == pytest.approx(row["idle (µs)"])


def test_launch_statistics_by_hand(trace):
    rows = {r["op"]: r for r in launch_stats(gpu_arrays(load_tree(trace))).records()}
    a = rows["(all launches)"]
    assert (a["launch calls"], a["GPU events"]) == (3, 3)
    assert a["launch time sum (µs)"] == pytest.approx(12)  # 5 + 5 + 2
    assert a["delay median (µs)"] == pytest.approx(9)  # delays 9, 9, 14.5
    assert a["delay max (µs)"] == pytest.approx(14.5)
    assert a["GPU work shorter than launch"] == 1  # k3: 1 µs of GPU work for a 2 µs launch
    assert a["clock skew"] == 0
    assert rows["aten::c"]["delay max (µs)"] == pytest.approx(14.5)


def test_queue_depth_by_hand(trace):
    (q,) = launch_queue(gpu_arrays(load_tree(trace))).records()
    # depth 1 on [1, 10), [31, 40), [45.5, 60): 32.5 µs of 59; empty on [10, 31) and [40, 45.5)
    assert q["queued max"] == 1
    assert q["queued mean"] == pytest.approx(32.5 / 59)
    assert q["nothing queued (%)"] == pytest.approx(100 * 26.5 / 59)


def test_steps_by_hand(trace):
    s3, s4 = steps_sheet(t := load_tree(trace), gpu_arrays(t)).records()
    assert (s3["step"], s3["source"], s3["GPU events"]) == (3, "ProfilerStep", 2)
    assert s3["GPU window (µs)"] == pytest.approx(40)  # [10, 50)
    assert s3["GPU busy (µs)"] == pytest.approx(20)
    assert s3["host wait (µs)"] == pytest.approx(11)  # [20, 31)
    assert s3["step time (µs)"] == pytest.approx(50)
    assert s3["verdict"] == ""  # 22% < 30%
    assert (s3["launch calls"], s3["launch time (µs)"]) == (2, pytest.approx(10))
    assert s4["GPU events"] == 1 and s4["step time (µs)"] == pytest.approx(40)  # k4 is in no step


def test_steps_option_keeps_only_those_steps(trace):
    r = analyze(trace, steps="4")
    assert [s["step"] for s in r.sheet("steps").records()] == [4]
    names = {k["kernel"] for k in r.sheet("kernel_summary").records()}
    assert names == {"k3", "k4"}  # k4 starts inside step 4's range
    assert any(n.startswith("steps: analysed 1 ProfilerStep step(s) (4)") for n in r.notes)


@pytest.mark.parametrize("spec", ["9", "x", "5:2", ""])
def test_steps_option_refuses_what_selects_nothing(trace, spec):
    from perfreport.errors import BadInput

    with pytest.raises(BadInput, match="--steps"):
        analyze(trace, steps=spec)


def test_a_cpu_bound_step_is_called_so(tmp_path):
    # one step, GPU work 2 µs, then 40 µs of host wait before the next launch: 40/53 > 30%
    ev = [
        X("user_annotation", "ProfilerStep#0", 0, 50),
        X("cuda_runtime", "cudaLaunchKernel", 1, 1, correlation=1),
        K("a", 3, 2, 1),
        X("cuda_runtime", "cudaLaunchKernel", 44, 1, correlation=2),
        K("b", 45, 8, 2),
    ]
    p = tmp_path / "c.json"
    p.write_text(json.dumps({"traceEvents": ev}))
    (s,) = steps_sheet(t := load_tree(str(p)), gpu_arrays(t)).records()
    assert s["host wait (µs)"] == pytest.approx(39)  # [5, 44)
    assert s["verdict"] == "CPU-bound"


@pytest.mark.parametrize("name", sorted(p.name for p in FIX.glob("*.json.gz") if p.name not in ("cpu_block.json.gz",)))
def test_on_every_fixture_idle_parts_sum_and_delays_are_explained(name):
    tree = load_tree(str(FIX / name))
    if not tree.gpu:
        pytest.skip("no GPU events")
    idle = {r["device"]: r for r in idle_time(gpu_arrays(tree)).records() if r["stream"] == "all"}
    for r in gpu_timeline(tree).records():
        if r["type"] == "idle":
            got = idle[r["device"]]
            assert 1000 * r["time (ms)"] == pytest.approx(got["idle (µs)"], abs=1e-3)
            parts = got["host wait (µs)"] + got["GPU wait (µs)"] + got["unknown (µs)"]
            assert parts == pytest.approx(got["idle (µs)"], abs=1e-3)
    for g in tree.gpu:
        c = g.launch_call
        if c is not None and g.ts < c[0]:  # clock skew: counted, never a negative delay
            rows = launch_stats(gpu_arrays(tree)).records()
            assert rows[0]["clock skew"] > 0
            break
