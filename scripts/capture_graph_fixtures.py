"""Capture the SGLang-layout graph-capture fixture pair (CPU, real torch.profiler runs).

    . .venv/bin/activate && python scripts/capture_graph_fixtures.py [--out fixtures]

A two-layer stand-in decode model (embedding, per layer q/k/v GEMMs, ``sglang::store_cache``
with SGLang's real signature, registered through scripts/stand_in_library.py, the output GEMM
and the residual add, then the LM head) runs
under ``torch.profiler.profile(activities=[CPU], record_shapes=True)`` in the order SGLang's
CUDA-graph runner uses (see docs/analyze.md for the source files):

* ``fixtures/sglang_tiny_capture/capture.json.gz``: the capture loop over ``capture_bs = [4, 8, 16]``
  in reversed order (16, 8, 4); for each size two eager warm-up forwards, then the captured
  forward. No annotation bounds a size (SGLang records none).
* ``fixtures/sglang_tiny_capture_per_bs/DecodeCudaGraphRunner_bs_<bs>_rank0.json.gz``: the
  same loop under SGLang's per-size profiler (``SGLANG_GRAPH_BATCH_CAPTURE``: a schedule of
  wait=2, warmup=0, active=1, stepped after each forward, one trace per size holding only
  its captured forward);
* ``fixtures/sglang_tiny_graph.json.gz``: one decode step ``step[DECODE bs=5]`` (5
  requests: SGLang pads them to the captured size 8) that copies the inputs into the static
  buffers and replays the graph.

Spliced events (a CPU run cannot record GPU runtime calls; everything else is the real
profiler's output, op events and shapes untouched): one ``hipLaunchKernel`` call (with
``args.kernel`` and a correlation id, as ROCm records them) inside each kernel-owning op
(``aten::index_select`` under ``aten::embedding``, ``aten::mm``, ``sglang::store_cache``,
``aten::add``), in a gap free of its children; a GPU kernel event for each launch of a
warm-up forward (they run); ``hipStreamBeginCapture`` / ``hipStreamEndCapture`` just before
and after each captured forward (its launches get no kernel: capture does not run them);
in the replay, one ``hipGraphLaunch`` at the end of the step annotation owning the 14 kernels
of the graph (names of the captured launches, fixed durations ``KERNEL_US``); MI300X
``deviceProperties``. Seeded: shapes and dtypes are the same on every run.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from fixture_io import write_profile  # scripts/ is on sys.path when a script runs
from stand_in_library import define

import torch
import torch.nn.functional as F

H, KV, V, SLOTS, LAYERS = 64, 32, 128, 64, 2  # KV = 2 KV heads x head dim 16
CAPTURE_BS = [4, 8, 16]
REPLAY_BS = 5
GPU_PID, GPU_TID = 2, 7
KERNELS = {  # op -> (kernel name, replay duration µs)
    "aten::index_select": ("void at::native::index_select_kernel<c10::BFloat16, long>", 2.0),
    "aten::mm": ("Cijk_Alik_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs_MT16x32x512_MI16x16x1", 6.0),
    "sglang::store_cache": ("void (anonymous namespace)::store_kvcache<64l, 1, false, long>", 1.5),
    "aten::add": (
        "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctorOnSelf_add<c10::BFloat16>>",
        1.0,
    ),
}
KERNEL_US = {k: v[1] for k, v in KERNELS.items()}
MI300X = [
    {
        "id": 0,
        "name": "AMD Instinct MI300X",
        "totalGlobalMem": 206141652992,
        "computeMajor": 9,
        "computeMinor": 4,
        "warpSize": 64,
        "numSms": 304,
    }
]


def store_cache(k, v, k_cache, v_cache, indices, *, row_bytes=0, num_split=0, size_limit=0):
    k_cache[indices] = k
    v_cache[indices] = v


def register_ops() -> None:
    # SGLang python/sglang/jit_kernel/kvcache.py: store_cache(k, v, k_cache, v_cache, indices,
    # *, row_bytes=0, num_split=0, size_limit=0), registered into torch.ops.sglang
    define(
        "sglang",
        "store_cache(Tensor k, Tensor v, Tensor(a!) k_cache, Tensor(b!) v_cache, "
        "Tensor indices, *, int row_bytes=0, int num_split=0, int size_limit=0) -> ()",
        store_cache,
    )


def _weights(gen):
    bf = lambda *s: (torch.randn(*s, generator=gen) * 0.05).to(torch.bfloat16)
    layers = [
        dict(
            q=bf(H, H),
            k=bf(H, KV),
            v=bf(H, KV),
            o=bf(H, H),
            cache=(torch.zeros(SLOTS, KV, dtype=torch.bfloat16), torch.zeros(SLOTS, KV, dtype=torch.bfloat16)),
        )
        for _ in range(LAYERS)
    ]
    return bf(V, H), layers, bf(H, V)


def forward(ids, loc, embed, layers, lm):
    x = F.embedding(ids, embed)
    for w in layers:
        q, k, v = torch.mm(x, w["q"]), torch.mm(x, w["k"]), torch.mm(x, w["v"])
        torch.ops.sglang.store_cache(k, v, *w["cache"], loc, row_bytes=KV * 2, num_split=0, size_limit=SLOTS)
        x = torch.add(x, torch.mm(q, w["o"]))
    return torch.mm(x, lm)


# ---- splicing ---------------------------------------------------------------------------------
def _end(e) -> float:
    return e["ts"] + e["dur"]


def _gap(op, evs) -> tuple[float, float]:
    """The largest interval inside ``op`` not covered by an event nested in it."""
    inner = sorted(
        (e for e in evs if e is not op and e["ts"] >= op["ts"] and _end(e) <= _end(op)), key=lambda e: e["ts"]
    )
    best, t = (0.0, op["ts"]), op["ts"]
    for e in inner + [{"ts": _end(op), "dur": 0.0}]:
        if e["ts"] - t > best[0]:
            best = (e["ts"] - t, t)
        t = max(t, _end(e))
    assert best[0] > 0.004, f"no free gap in {op['name']}"
    return best[1] + best[0] / 4, best[0] / 2


class _Splicer:
    def __init__(self, trace):
        self.trace, self.corr, self.cid = trace, 10_000, 0
        self.evs = [e for e in trace["traceEvents"] if e.get("ph") == "X"]
        self.ops = [e for e in self.evs if e.get("cat") == "cpu_op"]
        self.pid, self.tid = self.ops[0]["pid"], self.ops[0]["tid"]
        self.gpu_t = 0.0
        trace["deviceProperties"] = MI300X
        trace["roctracer_version"] = 4.1

    def runtime(self, name, ts, dur, **args):
        self.cid += 1
        e = {
            "ph": "X",
            "cat": "cuda_runtime",
            "name": name,
            "pid": self.pid,
            "tid": self.tid,
            "ts": round(ts, 3),
            "dur": round(dur, 3),
            "args": {"cid": self.cid, **args},
        }
        self.trace["traceEvents"].append(e)
        return e

    def kernel(self, name, after, dur, corr):
        self.gpu_t = max(self.gpu_t, after + 2.0)
        self.trace["traceEvents"].append(
            {
                "ph": "X",
                "cat": "kernel",
                "name": name,
                "pid": GPU_PID,
                "tid": GPU_TID,
                "ts": round(self.gpu_t, 3),
                "dur": dur,
                "args": {"device": 0, "stream": GPU_TID, "correlation": corr, "kind": "Dispatch Kernel"},
            }
        )
        self.gpu_t += dur

    def launches(self, lo, hi, run: bool) -> list[str]:
        """One hipLaunchKernel per kernel-owning op in [lo, hi); kernels when ``run``."""
        names = []
        owners = [o for o in self.ops if lo <= o["ts"] < hi and o["name"] in KERNELS]
        for o in sorted(owners, key=lambda o: o["ts"]):
            kname, dur = KERNELS[o["name"]]
            ts, d = _gap(o, self.evs)
            self.corr += 1
            self.runtime("hipLaunchKernel", ts, d, correlation=self.corr, kernel=kname)
            if run:
                self.kernel(kname, ts + d, dur, self.corr)
            names.append(kname)
        return names


def _forwards(sp: _Splicer) -> list[tuple[float, float]]:
    starts = sorted(o["ts"] for o in sp.ops if o["name"] == "aten::embedding")
    ends = []
    for i, s in enumerate(starts):
        nxt = starts[i + 1] if i + 1 < len(starts) else float("inf")
        # the LM head GEMM ends the forward (the next size's buffer slices follow it)
        ends.append(max(_end(o) for o in sp.ops if s <= o["ts"] < nxt and o["name"] == "aten::mm"))
    return list(zip(starts, ends))


def splice_capture(trace, per_size: int = 3) -> None:
    """``per_size`` forwards per batch size, the last one captured (3: two warm-ups first;
    1: a per-size file of the scheduled profiler, which records the captured run only)."""
    sp = _Splicer(trace)
    fw = _forwards(sp)
    assert len(fw) % per_size == 0, len(fw)
    for i, (lo, hi) in enumerate(fw):
        if i % per_size < per_size - 1:  # eager warm-up forwards: they run
            sp.launches(lo, hi + 1e-3, run=True)
            continue
        # right before the forward and right after it: nothing else in between (the
        # static-buffer slices of the next size come later, as in SGLang's capture_prepare)
        prev_end = max((_end(e) for e in sp.evs if _end(e) <= lo), default=lo - 4.0)
        nxt = min((e["ts"] for e in sp.evs if e["ts"] > hi), default=hi + 4.0)
        gb, ga = lo - prev_end, nxt - hi
        sp.runtime("hipStreamBeginCapture", prev_end + gb / 4, gb / 2)
        sp.launches(lo, hi + 1e-3, run=False)
        sp.runtime("hipStreamEndCapture", hi + ga / 4, ga / 2)


def splice_replay(trace) -> None:
    sp = _Splicer(trace)
    (step,) = [e for e in sp.evs if e.get("cat") == "user_annotation" and e["name"].startswith("step[")]
    ts, d = _gap(step, sp.evs)
    sp.corr += 1
    sp.runtime("hipGraphLaunch", ts, d, correlation=sp.corr)
    order = ["aten::index_select"] + ["aten::mm"] * 3 + ["sglang::store_cache", "aten::mm", "aten::add"]
    for op in [order[0]] + order[1:] * LAYERS + ["aten::mm"]:
        sp.kernel(KERNELS[op][0], ts + d, KERNELS[op][1], sp.corr)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=Path("fixtures"))
    a = ap.parse_args(argv)
    torch.manual_seed(0)
    gen = torch.Generator().manual_seed(0)
    register_ops()
    embed, layers, lm = _weights(gen)
    max_bs = max(CAPTURE_BS)
    ids = torch.zeros(max_bs, dtype=torch.int64)  # static graph input buffers
    loc = torch.zeros(max_bs, dtype=torch.int64)
    act = [torch.profiler.ProfilerActivity.CPU]
    meta = {"generator": "scripts/capture_graph_fixtures.py", "torch": torch.__version__}
    with torch.no_grad():
        with torch.profiler.profile(activities=act, record_shapes=True) as prof:
            for bs in reversed(CAPTURE_BS):  # largest first, as SGLang does
                for _ in range(3):  # 2 warm-ups + the captured run
                    forward(ids[:bs], loc[:bs], embed, layers, lm)
        n = write_profile(prof, a.out / "sglang_tiny_capture" / "capture.json.gz", meta, splice_capture)
        print(f"sglang_tiny_capture/capture.json.gz: {n} bytes")
        sizes = list(reversed(CAPTURE_BS))

        def per_size(p):
            bs = sizes.pop(0)
            name = f"DecodeCudaGraphRunner_bs_{bs}_rank0.json.gz"
            n = write_profile(
                p, a.out / "sglang_tiny_capture_per_bs" / name, meta, lambda t: splice_capture(t, per_size=1)
            )
            print(f"sglang_tiny_capture_per_bs/{name}: {n} bytes")

        sched = torch.profiler.schedule(wait=2, warmup=0, active=1, repeat=0)
        with torch.profiler.profile(
            activities=act, record_shapes=True, schedule=sched, on_trace_ready=per_size
        ) as prof:
            for bs in reversed(CAPTURE_BS):
                for _ in range(3):
                    forward(ids[:bs], loc[:bs], embed, layers, lm)
                    prof.step()
        new_ids = torch.randint(0, V, (REPLAY_BS,), generator=gen)
        new_loc = torch.randperm(SLOTS, generator=gen)[:REPLAY_BS]
        with torch.profiler.profile(activities=act, record_shapes=True) as prof:
            with torch.profiler.record_function(f"step[DECODE bs={REPLAY_BS}]"):
                ids[:REPLAY_BS].copy_(new_ids)
                loc[:REPLAY_BS].copy_(new_loc)
        n = write_profile(prof, a.out / "sglang_tiny_graph.json.gz", meta, splice_replay)
        print(f"sglang_tiny_graph.json.gz: {n} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
