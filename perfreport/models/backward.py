"""Backward models for autograd nodes, built from the FORWARD op's recorded arguments.

An autograd node such as ``AddmmBackward0`` records no shapes of its own, but it carries the
``Sequence number`` of the forward op that created it; the pass
:mod:`perfreport.passes.backward_link` copies that forward op's name and args into the node's
``perf_meta["forward"]`` when a backward rule exists for the forward's model. The node then
takes its whole subtree (all the kernels of its backward) in the unified table.

Rules (per forward family):
* GEMM, C = A·B (+bias): backward computes dA = dC·Bᵀ and dB = Aᵀ·dC, each 2·B·M·N·K FLOPs
  -> FLOPs = 4·B·M·N·K. Bytes: dA reads dC and B, writes dA; dB reads A and dC, writes dB
  -> 2·|C| + 2·|A| + 2·|B|, each at its dtype. The bias gradient d(bias) = Σ_M dC
  (B·M·N adds, |bias| written) is counted once: autograd usually reduces it in an
  ``aten::sum`` beside the node (under the same ``evaluate_function``), which has its own
  row and model; only when that ``aten::sum`` is inside the node's subtree (its kernels are
  then the node's) does the node count it.
* Attention (SDPA / flash forward): FLOPs = 2.5 x forward (FlashAttention-2, Dao 2023, §3.1:
  the backward does 5 matmuls of the forward's 2, recomputing S = QKᵀ); bytes: read Q, K, V,
  O, dO and write dQ, dK, dV -> 2·(|Q| + |K| + |V|) + 2·|O|.
"""

from __future__ import annotations

from types import MappingProxyType, SimpleNamespace

from perfreport.errors import ModelError
from perfreport.models.kernel_precision import KernelMath
from perfreport.models.dtypes import bytes_per_element
from perfreport.models.gemm import Gemm
from perfreport.models.attention.sdpa import AttentionBwd, AttentionFwd


def has_backward_rule(cls) -> bool:
    if cls is None:
        return False
    if issubclass(cls, AttentionBwd):
        return False
    return issubclass(cls, (Gemm, AttentionFwd))


def _no_lookup(name: str):
    raise ModelError(f"no op registry installed to find the model of {name}")


def _sums_inside(op) -> bool:
    """Whether an ``aten::sum`` (the bias-gradient reduction) runs inside ``op``'s subtree."""
    walk = getattr(op, "walk", None)
    return walk is not None and any(o.name == "aten::sum" for o in walk() if o is not op)


class BackwardOfForward(KernelMath):
    """Backward of a linked forward op. ``resolve_forward(name) -> model class`` is set by
    :mod:`perfreport.models.registry` (which imports this module, never the reverse)."""

    kind = "matrix"
    needs = ("forward", "kernel_math")
    resolve_forward = staticmethod(_no_lookup)

    def __init__(self, op):
        super().__init__(op)
        fwd = op.perf_meta.get("forward")
        if not fwd:
            raise ModelError(f"{op.name}: no forward op linked through Sequence number")
        cls = self.resolve_forward(fwd["name"])
        if not has_backward_rule(cls):
            raise ModelError(f"{op.name}: no backward rule for forward op {fwd['name']}")
        self.fwd = cls(SimpleNamespace(name=fwd["name"], args=fwd["args"], perf_meta=MappingProxyType({})))
        self.is_gemm = isinstance(self.fwd, Gemm)
        self.tf32_default = getattr(self.fwd, "tf32_default", False)
        self.category = ("GEMM" if self.is_gemm else "SDPA") + "_bwd"
        # the bias gradient is this node's only when its reduction runs inside it
        self.bias_grad = self.is_gemm and self.fwd.bias is not None and _sums_inside(op)

    def params(self) -> dict:
        return {"forward op": self.op.perf_meta["forward"]["name"], **self.fwd.params()}

    def flops(self) -> float:
        f = self.fwd
        if self.is_gemm:
            fl = 4.0 * f.batch * f.M * f.N * f.K
            if self.bias_grad:
                fl += f.batch * f.M * f.N
            return fl
        return 2.5 * f.fwd_flops()

    def bytes(self) -> float:
        f = self.fwd
        if self.is_gemm:
            c = f.batch * f.M * f.N * bytes_per_element(f.out_dtype)
            bias = f.bias.nbytes if self.bias_grad else 0
            return 2 * c + 2 * f.a.nbytes + 2 * f.b.nbytes + bias
        return 2 * (f.q.nbytes + f.k.nbytes + f.v.nbytes) + 2 * f.out_bytes()

    def precision(self) -> str:
        return self.fwd.precision()
