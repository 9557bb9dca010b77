"""Minimal Kineto trace fragments and small perf models for the tables tests.

Each model takes its bytes per call from the op's first Concrete Input, so a test states the
number it works with in the trace itself. Spec used throughout: H100 SXM (3.35 TB/s HBM,
50 MiB = 52,428,800 B L2, 64 GB/s host link per direction, 66.9 TFLOP/s vector fp32).
"""

from __future__ import annotations

import json

from perfreport.errors import ModelError
from perfreport.models.base import Assumption, PerfModel
from perfreport.pipeline import load_tree
from perfreport.specs import load_arch
from perfreport.tables import build_tables
from tests.kit import X

H100 = load_arch("h100")


class Fixed(PerfModel):
    """bytes = Concrete Inputs[0]; no FLOPs; vector fp32."""

    category = "test"
    kind = "vector"

    def params(self):
        return {}

    def flops(self):
        return 0.0

    def bytes(self):
        return float(self.op.args["Concrete Inputs"][0])

    def precision(self):
        return "fp32"


class Attn(Fixed):
    category = "InferenceAttention_fwd"


class Experts(Fixed):
    """One unknown: the point figure reads B bytes; the bounds are B/2 and 2B."""

    def assumptions(self):
        b = self.bytes()
        return [Assumption("experts touched: 8 expected (bounds 4 … 16)", b / 2, 2 * b)]


class Broken(Fixed):
    def __init__(self, op):
        raise ModelError(f"{op.name}: no Input Dims[0]")


class Gemm(Fixed):
    """FLOPs = Concrete Inputs[1] (bytes as Fixed); matrix bf16 (H100: 989.4 TFLOP/s)."""

    kind = "matrix"

    def flops(self):
        return float(self.op.args["Concrete Inputs"][1] or 0)

    def precision(self):
        return "bf16"


class Int8(Fixed):
    def precision(self):
        return "int8"  # vector_int8: no H100 peak -> no roofline figure


MODELS = {
    "t::gemm": Gemm,
    "t::fixed": Fixed,
    "t::attn": Attn,
    "t::experts": Experts,
    "t::broken": Broken,
    "t::int8": Int8,
}


def use_models(monkeypatch):
    from perfreport.models import registry

    for k, v in MODELS.items():
        monkeypatch.setitem(registry.MODELS, k, v)


class Trace:
    """Builds events: ``op(name, bytes, [(kernel, ts, dur), ...])`` launches each kernel from
    the op through a runtime call of its own correlation."""

    def __init__(self):
        self.events: list[dict] = []
        self.corr = 0
        self.t = 0.0

    def _corr(self) -> int:
        self.corr += 1
        return self.corr

    def kernel(self, name, ts, dur, corr, stream=7, cat="kernel", nbytes=None):
        extra = {"bytes": nbytes} if nbytes is not None else {}
        self.events.append(X(cat, name, ts, dur, pid=0, tid=stream, device=0, stream=stream, correlation=corr, **extra))

    def op(self, name, nbytes=None, kernels=(), cat="cpu_op", launch="cudaLaunchKernel", flops=None):
        start = self.t
        n = max(1, len(kernels))
        args = {"Concrete Inputs": [str(nbytes), "" if flops is None else str(flops)]} if nbytes is not None else {}
        self.events.append(X(cat, name, start, 10.0 * n + 10, **args))
        for i, k in enumerate(kernels):
            kname, ts, dur = k[:3]
            stream = k[3] if len(k) > 3 else 7
            nb = k[4] if len(k) > 4 else None  # a memcpy's recorded bytes (Kineto args.bytes)
            kcat = (
                "gpu_memcpy"
                if kname.startswith("Memcpy")
                else ("gpu_memset" if kname.startswith("Memset") else "kernel")
            )
            c = self._corr()
            self.events.append(X("cuda_runtime", launch, start + 1 + 10 * i, 5, correlation=c))
            self.kernel(kname, ts, dur, c, stream=stream, cat=kcat, nbytes=nb)
        self.t = start + 10.0 * n + 20
        return self

    def write(self, tmp_path, name="t.json") -> str:
        p = tmp_path / name
        p.write_text(json.dumps({"traceEvents": self.events}))
        return str(p)


def tables(tmp_path, trace: Trace, spec=H100):
    tree = load_tree(trace.write(tmp_path))
    sheets, cov = build_tables(tree, spec=spec)
    return tree, {s.name: s for s in sheets}, cov


def rows(sheets, name):
    return [r for r in sheets["unified_perf_summary"].records() if r["name"] == name]
