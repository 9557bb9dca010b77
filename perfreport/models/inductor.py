"""Inductor-generated Triton kernels recorded as cpu_ops (category ``Inductor``).

With the profiler on, Inductor's Triton launcher records each kernel as a cpu_op named by
the kernel (``triton_poi_fused_add_mul_0``, ``triton_red_fused_mean_1``,
``triton_per_fused__softmax_2``, ``triton_tem_fused_mm_3``) whose recorded inputs are the
kernel's arguments in order: tensor pointers (``in_ptr*``, ``out_ptr*``, ``in_out_ptr*``),
then integer sizes, the last ones being ``xnumel`` (and ``r0_numel`` for reductions) as
``Scalar`` Concrete Inputs. Which pointer is read and which written is not recorded.

Pointwise / reduction / persistent-reduction kernels (memory-bound model):
* bytes = Σ over tensor arguments of ``min(numel, elements the kernel indexes) × bytes per
  element``: each buffer is read or written once (an ``in_out_ptr`` is read AND written but
  counted once: a lower bound), capped at ``xnumel`` (pointwise) or ``xnumel·r0_numel``
  (reductions) elements, since a kernel cannot touch more distinct elements than its index
  space (a cache of which it gathers some rows counts only the rows indexed).
* FLOPs: one per indexed element per arithmetic op named in the kernel name (``add``,
  ``mul``, ``exp``, ``rsqrt`` ...; Inductor names a kernel after the aten ops it fused, in
  order, and truncates long names), at least one per reduced element for reductions;
  kernels that only move data (``_to_copy``, ``cat``, ``constant_pad_nd``, ``clone``,
  ``index`` ...) get 0 FLOPs, bytes only.
* precision: the widest floating dtype among the tensors (vector units).

Template kernels ``triton_tem_*`` (``mm``/``addmm``/``bmm`` templates): a GEMM when three
tensor arguments have the shapes A[(B,)M,K], B[(B,)K,N], C[(B,)M,N] (bias optional):
``2·B·M·N·K`` FLOPs, A + B + C (+ bias) bytes, matrix units; otherwise the row says why.
"""

from __future__ import annotations

import re

from perfreport.errors import ModelError
from perfreport.models.args import Tensor, arg_int, nargs, tensor_opt
from perfreport.models.base import PerfModel
from perfreport.models.dtypes import is_floating, precision_of

_KIND = re.compile(r"triton_(poi|red|per|tem)_(.*?)(_\d+)?$")
# aten op names counted as one FLOP per element (elementwise arithmetic, as elementwise.py)
ARITH = frozenset(
    """add sub mul div neg exp exp2 expm1 log log2 log1p sqrt rsqrt reciprocal
sigmoid silu gelu relu tanh sin cos pow abs maximum minimum clamp where erf sum mean amax amin
max min var std softmax logsumexp rsub addcmul lerp hardswish hardsigmoid mish softplus
leaky_relu elu sign floor ceil round square""".split()
)
_WIDTH = {"fp64": 8, "fp32": 4, "bf16": 2, "fp16": 2, "fp8": 1, "fp4": 1}


def _fused_ops(name: str) -> list[str]:
    """'fused__to_copy_add_mean_mul_rsqrt' -> ['add', 'mean', 'mul', 'rsqrt'] (ARITH only)."""
    words = name.replace("__", "_").split("_")
    return [w for w in words if w in ARITH]


class InductorKernel(PerfModel):
    category = "Inductor"
    kind = "vector"

    def __init__(self, op):
        super().__init__(op)
        m = _KIND.fullmatch(op.name)
        if not m:
            raise ModelError(f"{op.name}: not an Inductor triton kernel name")
        self.family, self.ops = m.group(1), _fused_ops(m.group(2))
        n = nargs(op)
        self.tensors: list[Tensor] = [t for t in (tensor_opt(op, i) for i in range(n)) if t]
        if not self.tensors:
            raise ModelError(f"{op.name}: no tensor arguments recorded (record_shapes off?)")
        ints = [v for v in (self._int(i) for i in range(n)) if v is not None]
        if self.family == "tem":
            self._gemm()
            return
        need = 2 if self.family in ("red", "per") else 1
        if len(ints) < need:
            raise ModelError(f"{op.name}: xnumel{'/r0_numel' if need == 2 else ''} not recorded")
        self.xnumel = ints[-need]
        self.rnumel = ints[-1] if need == 2 else 1
        self.index_space = self.xnumel * self.rnumel

    def _int(self, i: int) -> int | None:
        types = self.op.args.get("Input type") or []
        if i >= len(types) or types[i] != "Scalar":
            return None
        try:
            return arg_int(self.op, i)
        except ModelError:
            return None  # a float scalar argument

    def _gemm(self) -> None:
        ts = [t for t in self.tensors if len(t.shape) in (2, 3)]
        for a in ts:
            for b in ts:
                for c in ts:
                    if a is b or b is c or a is c or len({len(a.shape), len(b.shape), len(c.shape)}) != 1:
                        continue
                    if (
                        a.shape[-1] == b.shape[-2]
                        and c.shape[-2:] == (a.shape[-2], b.shape[-1])
                        and a.shape[:-2] == b.shape[:-2] == c.shape[:-2]
                    ):
                        self.gemm = (a, b, c)
                        self.kind = "matrix"
                        self.bias = [t for t in self.tensors if t is not a and t is not b and t is not c]
                        return
        raise ModelError(
            f"{self.op.name}: template kernel arguments "
            f"{[list(t.shape) for t in self.tensors]} are not a GEMM's A, B, C"
        )

    def params(self) -> dict:
        if self.family == "tem":
            a, b, c = self.gemm
            return {
                "kernel": self.family,
                "M": a.shape[-2],
                "N": b.shape[-1],
                "K": a.shape[-1],
                "B": a.shape[0] if len(a.shape) == 3 else 1,
                "dtype": a.dtype,
            }
        return {
            "kernel": self.family,
            "xnumel": self.xnumel,
            "rnumel": self.rnumel,
            "fused_ops": " ".join(self.ops),
            "tensors": tuple(t.shape for t in self.tensors),
        }

    def flops(self) -> float:
        if self.family == "tem":
            a, b, c = self.gemm
            batch = a.shape[0] if len(a.shape) == 3 else 1
            return 2.0 * batch * a.shape[-2] * b.shape[-1] * a.shape[-1]
        per = len(self.ops)
        if self.family in ("red", "per"):
            per = max(per, 1)
        return float(per * self.index_space)

    def bytes(self) -> float:
        if self.family == "tem":
            return float(sum(t.nbytes for t in self.gemm) + sum(t.nbytes for t in self.bias))
        return float(sum(min(t.numel, self.index_space) * (t.nbytes / t.numel if t.numel else 0) for t in self.tensors))

    def precision(self) -> str:
        fl = [precision_of(t.dtype) for t in self.tensors if is_floating(t.dtype)]
        if self.family == "tem":
            return precision_of(self.gemm[0].dtype)
        return max(fl, key=lambda p: _WIDTH.get(p, 0)) if fl else "fp32"


__all__ = ["InductorKernel", "ARITH"]
