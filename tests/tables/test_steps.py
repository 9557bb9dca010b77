"""tables/steps.py: the run step by step: GPU window, busy, idle, step time, launch calls, tokens."""

from __future__ import annotations

import numpy as np

from perfreport.pipeline import load_tree
from perfreport.tables import columns as C
from perfreport.tables.gpu_arrays import gpu_arrays
from perfreport.tables.steps import _covered, step_rows, steps_sheet
from tests.kit import X, write_trace


def _k(name, ts, dur, corr):
    return X("kernel", name, ts, dur, pid=0, tid=7, device=0, stream=7, correlation=corr)


def _tree(tmp_path):
    ev = [
        X("user_annotation", "ProfilerStep#1", 0, 100),
        X("cpu_op", "aten::mm", 10, 30),
        X("cuda_runtime", "cudaLaunchKernel", 12, 3, correlation=1),
        X("cuda_runtime", "cudaLaunchKernel", 20, 2, correlation=2),
        X("user_annotation", "ProfilerStep#2", 100, 50),
        X("cpu_op", "aten::add", 110, 10),
        X("cuda_runtime", "cudaLaunchKernel", 112, 4, correlation=3),
        _k("a", 40, 20, 1),  # 40..60
        _k("b", 70, 10, 2),  # 70..80: window 40..80, busy 30, idle 10
        _k("c", 140, 30, 3),  # 140..170: past the step's CPU end (150)
        _k("stray", 50, 1, 99),  # unlinked: no step
    ]
    t = load_tree(write_trace(tmp_path, ev))
    return t, gpu_arrays(t)


def test_step_rows_by_hand(tmp_path):
    t, arr = _tree(tmp_path)
    one, two = step_rows(t, arr)
    assert (one[C.STEP], one[C.SOURCE], one[C.CPU_TIME_US], one[C.STEP_TIME_US], one[C.GPU_EVENTS]) == (
        1,
        "ProfilerStep",
        100.0,
        100.0,
        2,
    )
    assert (one[C.GPU_WINDOW_US], one[C.GPU_BUSY_US], one[C.GPU_IDLE_US]) == (40.0, 30.0, 10.0)
    assert (one[C.LAUNCH_CALLS], one[C.LAUNCH_TIME_US], one[C.TOKENS], one[C.TIME_PER_TOKEN_US]) == (2, 5.0, None, None)
    # step 2 lasts to its last GPU end: 100 .. 170
    assert (two[C.STEP_TIME_US], two[C.GPU_WINDOW_US], two[C.GPU_IDLE_US], two[C.LAUNCH_CALLS]) == (70.0, 30.0, 0.0, 1)
    assert 0.0 <= two[C.HOST_WAIT_US] <= two[C.GPU_WINDOW_US]


def test_the_sheet_notes_its_source_or_the_lack_of_steps(tmp_path):
    t, arr = _tree(tmp_path)
    sheet = steps_sheet(t, arr, note="steps: analysed 2")
    assert sheet.notes == [
        "steps: analysed 2",
        "2 step(s) from ProfilerStep; CPU-bound = host wait above 30% of the step time",
    ]
    bare = load_tree(write_trace(tmp_path, [X("cpu_op", "aten::mm", 0, 1)], name="bare.json"))
    assert steps_sheet(bare, gpu_arrays(bare)).rows == []
    assert steps_sheet(bare, gpu_arrays(bare)).notes == [
        "no steps found (no ProfilerStep#N, iteration annotation or graph replay)"
    ]


def test_covered_length_of_ranges_by_disjoint_intervals():
    starts, ends = np.array([0.0, 10.0]), np.array([5.0, 20.0])
    a, b = np.array([0.0, 3.0, 6.0, 25.0]), np.array([30.0, 12.0, 9.0, 30.0])
    assert _covered(starts, ends, a, b).tolist() == [15.0, 4.0, 0.0, 0.0]
    assert _covered(np.zeros(0), np.zeros(0), a, b).tolist() == [0.0] * 4
