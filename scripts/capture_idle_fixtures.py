"""Capture a real CPU profiler run with deliberate host stalls, a small-op storm and a dependency
wait, and give it the GPU side a CPU cannot record: ``fixtures/idle_launch_steps.json.gz``.

    python scripts/capture_idle_fixtures.py [--out DIR]

The CPU side is a real ``torch.profiler`` run (three ``ProfilerStep#N`` ranges from
``prof.step()``). In every step: a storm of 20 tiny ``aten::add``, a 3 ms host stall
(``time.sleep`` inside ``record_function("host_stall")``), one ``aten::mm`` followed at once by
four ``aten::relu``; in step 1 also one ``aten::mul`` right after the stall.

Spliced in (the GPU a CPU machine lacks), per launching op, by fixed rules the tests restate:
* one ``cudaLaunchKernel`` runtime call inside the op, after the op's own children (so the
  op itself is the launching op), just before the op ends: with c the children's last end (the
  op's start without children) and e the op's end, it lasts d = min(4, (e - c)/2) µs, ends
  min(1, (e - c)/4) µs before e, and has its own correlation id;
* one kernel on device 0: stream 7 runs in launch order, each kernel starting at
  max(launch start + 5 µs, the stream's previous end); durations: add 0.25 x its launch call
  (shorter than its launch), mm 3 ms, relu 2 µs; the ``aten::mul`` kernel runs on stream 8 and
  starts 150 µs after its launch (it waits on an event: a dependency, not the host), 10 µs long;
* H100 ``deviceProperties``.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from fixture_io import fixture_main, write_profile  # noqa: E402

NAME = "idle_launch_steps.json.gz"
LATENCY = 5.0
DEP_WAIT = 150.0
KERNEL_US = {"aten::mm": 3000.0, "aten::relu": 2.0, "aten::mul": 10.0}


def workload(prof) -> None:
    import torch

    a = torch.ones(8)
    x = torch.randn(64, 64)
    w = torch.randn(64, 64)
    for step in range(3):
        for _ in range(20):
            torch.add(a, 1)
        with torch.profiler.record_function("host_stall"):
            time.sleep(0.003)
        if step == 1:
            torch.mul(a, 2)
        y = torch.mm(x, w)
        for _ in range(4):
            y = torch.relu(y)
        prof.step()


def splice(trace: dict) -> None:
    ev = trace["traceEvents"]
    ops = sorted(
        (e for e in ev if e.get("ph") == "X" and e.get("cat") == "cpu_op" and e["name"] in ("aten::add", *KERNEL_US)),
        key=lambda e: e["ts"],
    )
    free = {7: 0.0, 8: 0.0}
    corr = 10_000_000
    pid, tid = ops[0]["pid"], ops[0]["tid"]
    cpu = [e for e in ev if e.get("ph") == "X" and e.get("cat") == "cpu_op" and e["pid"] == pid and e["tid"] == tid]
    for o in ops:
        if o["pid"] != pid or o["tid"] != tid:
            continue
        end = o["ts"] + o["dur"]
        kids = [c["ts"] + c["dur"] for c in cpu if c is not o and o["ts"] <= c["ts"] and c["ts"] + c["dur"] <= end]
        c0 = max(kids, default=o["ts"])
        corr += 1
        ldur = min(4.0, (end - c0) / 2)
        lts = end - min(1.0, (end - c0) / 4) - ldur
        ev.append(
            {
                "ph": "X",
                "cat": "cuda_runtime",
                "name": "cudaLaunchKernel",
                "pid": pid,
                "tid": tid,
                "ts": lts,
                "dur": ldur,
                "args": {"correlation": corr},
            }
        )
        if o["name"] == "aten::mul":
            stream, start = 8, lts + DEP_WAIT
        else:
            stream = 7
            start = max(lts + LATENCY, free[7])
        dur = KERNEL_US.get(o["name"], 0.25 * ldur)
        free[stream] = start + dur
        ev.append(
            {
                "ph": "X",
                "cat": "kernel",
                "name": f"{o['name'].split('::')[1]}_kernel",
                "pid": 0,
                "tid": stream,
                "ts": start,
                "dur": dur,
                "args": {"device": 0, "stream": stream, "correlation": corr},
            }
        )
    trace["deviceProperties"] = [{"id": 0, "name": "NVIDIA H100 80GB HBM3", "numSms": 132}]


def capture(path: Path) -> int:
    import torch

    steps = torch.profiler.schedule(wait=0, warmup=0, active=3, repeat=1)  # a schedule makes step() record
    with torch.profiler.profile(
        activities=[torch.profiler.ProfilerActivity.CPU], record_shapes=True, schedule=steps
    ) as prof:
        workload(prof)
    meta = {"generator": "scripts/capture_idle_fixtures.py", "torch": torch.__version__}
    return write_profile(prof, path, meta, edit=splice)


if __name__ == "__main__":
    sys.exit(fixture_main(sys.argv[1:], __doc__, NAME, capture))
