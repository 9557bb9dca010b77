"""Inductor-generated Triton kernels recorded as cpu_ops (category ``Inductor``).

With the profiler on, Inductor's Triton launcher records each kernel as a cpu_op named by
the kernel (``triton_poi_fused_add_mul_0``, ``triton_red_fused_mean_1``,
``triton_per_fused__softmax_2``, ``triton_tem_fused_mm_3``) whose recorded inputs are the
kernel's arguments in order: tensor pointers (``in_ptr*``, ``out_ptr*``, ``in_out_ptr*``),
then integer sizes, the last ones being ``xnumel`` (and ``r0_numel`` for reductions) as
``Scalar`` Concrete Inputs. Which pointer is read and which written is not recorded.

Argument order (pytorch/pytorch torch/_inductor/codegen/common.py ``KernelArgs.python_argdefs``,
appended to by torch/_inductor/codegen/triton.py ``TritonKernel.codegen_kernel``): in-place buffers
``in_out_ptr*`` first, then inputs ``in_ptr*``, then outputs ``out_ptr*``, then size variables
``ks*``, then one ``<prefix>numel`` per range tree (``ynumel, xnumel`` for a tiled pointwise
kernel, ``xnumel, r0_numel`` for a reduction). The launcher records the values, not the names
(torch/_inductor/runtime/triton_heuristics.py ``CachingAutotuner.run`` /
``get_profiler_kwargs``), plus ``kernel_kwargs`` (``"YBLOCK=64,XBLOCK=64"``: one ``*BLOCK`` per
range tree; a persistent reduction's R block is a constexpr, not passed) and, when Inductor ran
with ``benchmark_kernel`` or ``profile_bandwidth``, ``kernel_num_gb``.

Pointwise / reduction / persistent-reduction kernels (memory-bound model):
* index space = the product of the range trees' numels: the trailing integers, as many as the
  ``kernel_kwargs`` name blocks (plus one R tree for a persistent reduction); without
  ``kernel_kwargs``, the longest run of trailing integers whose product fits the largest
  tensor (a kernel indexes no more elements than its largest buffer holds: the output of a
  pointwise kernel, the input of a reduction), at least ``xnumel`` (and ``r0_numel``).
* bytes = ``kernel_num_gb``·1e9 when recorded (Inductor's ``estimate_kernel_num_bytes``: each
  buffer once, an in-place buffer twice). Otherwise Σ over tensor arguments of
  ``min(numel, index space) × bytes per element`` (a cache of which it gathers some rows counts
  only the rows indexed), with a read-and-written ``in_out_ptr`` counted twice. Which pointers
  are in-place is not recorded; from the order above: when the last tensor cannot be an output
  (pointwise: numel below the index space; reduction: numel not ``xnumel``), there is no
  ``out_ptr``, so the first tensor is an ``in_out_ptr``; a single tensor that a kernel with
  arithmetic reads is one too. The row names that as an assumption, with bounds (the proven
  in-place buffers … every buffer that could be one read and written).
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
from perfreport.models.base import Assumption, PerfModel
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
        if self.family == "tem":
            self._gemm()
            return
        ints = self._trailing_ints(n)
        red = self.family in ("red", "per")
        need = 2 if red else 1
        if len(ints) < need:
            raise ModelError(f"{op.name}: xnumel{'/r0_numel' if need == 2 else ''} not recorded")
        trees = self._range_trees(red)
        if trees is not None:
            if len(ints) < trees:
                raise ModelError(f"{op.name}: kernel_kwargs name {trees} range trees, {len(ints)} sizes recorded")
            numels = ints[-trees:]
        else:  # longest trailing run that fits the largest buffer
            cap = max(t.numel for t in self.tensors)
            k = need
            while k < len(ints) and _prod(ints[-(k + 1) :]) <= cap:
                k += 1
            numels = ints[-k:]
        self.numels = tuple(numels)
        n_r = max(sum(1 for b in self._blocks() if b.startswith("R")), 1) if red else 0
        if trees is None:
            n_r = 1 if red else 0
        self.rnumel = _prod(numels[len(numels) - n_r :]) if n_r else 1
        self.xnumel = _prod(numels[: len(numels) - n_r])
        self.index_space = self.xnumel * self.rnumel
        self._in_out()

    def _blocks(self) -> list[str]:
        kw = self.op.args.get("kernel_kwargs")
        if not isinstance(kw, str) or not kw:
            return []
        return [k.split("=")[0].strip() for k in kw.split(",") if k.split("=")[0].strip().endswith("BLOCK")]

    def _range_trees(self, red: bool) -> int | None:
        """Range trees named by ``kernel_kwargs`` (None when not recorded)."""
        blocks = self._blocks()
        if not blocks:
            return None
        xyz = sum(1 for b in blocks if b[0] in "XYZ")
        r = sum(1 for b in blocks if b.startswith("R"))
        return max(xyz, 1) + (max(r, 1) if red else 0)

    def _trailing_ints(self, n: int) -> list[int]:
        """The integer arguments after the last tensor argument, in order."""
        last = max((i for i in range(n) if tensor_opt(self.op, i)), default=-1)
        out = []
        for i in range(last + 1, n):
            v = self._int(i)
            if v is not None:
                out.append(v)
        return out

    def _in_out(self) -> None:
        """In-place buffers: ``proven`` (counted read and written in the point figure) and
        ``possible`` (the most there can be: a prefix of tensors an output could be)."""
        ts, space = self.tensors, self.index_space
        sizes = (space,) if self.family == "poi" else (self.xnumel, space)

        def writable(t: Tensor) -> bool:  # a pointwise store covers the index space (a scatter more)
            return t.numel >= space if self.family == "poi" else t.numel in sizes

        possible = 0
        while possible < len(ts) and writable(ts[possible]):
            possible += 1
        if len(ts) > 1:
            proven = 0 if writable(ts[-1]) else 1  # no out_ptr: the writes go to in_out_ptr0
        else:
            proven = 1 if (self.ops or self.family != "poi") else 0  # its only buffer is read
        self.proven = min(proven, possible)
        self.possible = possible
        self.num_gb = self.op.args.get("kernel_num_gb")

    def _buffer_bytes(self, k: int) -> float:
        """Bytes with the first ``k`` tensors read and written."""
        per = [min(t.numel, self.index_space) * (t.nbytes / t.numel if t.numel else 0) for t in self.tensors]
        return float(sum(per) + sum(per[:k]))

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
            "numels": self.numels,
            "in_out_buffers": self.proven,
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
        if isinstance(self.num_gb, (int, float)) and self.num_gb > 0:
            return float(self.num_gb) * 1e9
        return self._buffer_bytes(self.proven)

    def assumptions(self) -> list[Assumption]:
        if self.family == "tem" or (isinstance(self.num_gb, (int, float)) and self.num_gb > 0):
            return []
        if self.possible == self.proven:
            return []
        return [
            Assumption(
                f"buffers read and written (in_out_ptr, not named in the trace): {self.proven} "
                f"(bounds {self.proven} … {self.possible})",
                self._buffer_bytes(self.proven),
                self._buffer_bytes(self.possible),
            )
        ]

    def precision(self) -> str:
        fl = [precision_of(t.dtype) for t in self.tensors if is_floating(t.dtype)]
        if self.family == "tem":
            return precision_of(self.gemm[0].dtype)
        return max(fl, key=lambda p: _WIDTH.get(p, 0)) if fl else "fp32"


def _prod(xs) -> int:
    out = 1
    for x in xs:
        out *= x
    return out


__all__ = ["InductorKernel", "ARITH"]
