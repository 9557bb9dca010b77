"""gpu_timeline: the identity, and the definitions on a hand-made case."""

from __future__ import annotations

import pytest

from perfreport.events import GpuEvent
from perfreport.pipeline import load_tree
from perfreport.tables.timeline import device_timeline, gpu_timeline
from tests.conftest import FIX


def G(name, cat, ts, dur):
    return GpuEvent(0, name, cat, 0, 7, ts, dur, None)


def test_hand_case():
    # compute [0,10) and [20,30); nccl [5,25); memcpy [28,40); memset [50,52)
    ev = [
        G("gemm", "kernel", 0, 10),
        G("gemm", "kernel", 20, 10),
        G("ncclDevKernel_AllReduce", "kernel", 5, 20),
        G("Memcpy HtoD", "gpu_memcpy", 28, 12),
        G("Memset", "gpu_memset", 50, 2),
    ]
    t = device_timeline(ev)
    assert t["computation"] == 22  # 10 + 10 + memset 2
    assert t["communication"] == 20
    assert t["exposed comm"] == 10  # [10,20)
    assert t["memcpy"] == 12
    assert t["exposed memcpy"] == 10  # [30,40)
    assert t["busy"] == 42  # [0,40) + [50,52)
    assert t["total"] == 52 and t["idle"] == 10
    assert t["computation"] + t["exposed comm"] + t["exposed memcpy"] + t["idle"] == t["total"]


@pytest.mark.parametrize(
    "name",
    [
        "h100_qwen_0.5b",
        "mi300_qwen_0.5b",
        "mi210_gpu_only",
        "vllm_decode_graph",
        "sglang_decode",
        "torch_compile_triton",
    ],
)
def test_identity_on_real_traces(name):
    tree = load_tree(str(FIX / f"{name}.json.gz"))
    df = gpu_timeline(tree).df
    for dev, g in df.groupby("device"):
        v = dict(zip(g["type"], g["time (ms)"]))
        assert v["computation"] + v["exposed comm"] + v["exposed memcpy"] + v["idle"] == pytest.approx(
            v["total"], abs=1e-9
        )
        assert v["busy"] + v["idle"] == pytest.approx(v["total"], abs=1e-9)
