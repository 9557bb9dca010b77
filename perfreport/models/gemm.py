"""GEMM models: C[B, M, N] = A[B, M, K] @ B[B, K, N] (+ bias).

FLOPs = 2·B·M·N·K (one multiply + one add per MAC) + B·M·N when a bias is added
(one add per output element; skipped when ``beta`` is recorded as 0).
Bytes = A + B + C (+ bias, + scale tensors) each at its own recorded dtype: every operand is
read or written once (the ideal, cache-perfect traffic a roofline assumes).

M, N and K always come from SHAPES; strides only appear in ``params()`` (``stride_A``,
``stride_B``) so transposed layouts group separately without changing the arithmetic.

Signatures (positional, as traces record them):
* ``aten::mm(self[M,K], mat2[K,N])``; ``mm.out`` adds ``out``; ``mm.dtype`` adds ``out_dtype``
  (PyTorch native_functions.yaml).
* ``aten::addmm(self=bias, mat1[M,K], mat2[K,N], beta, alpha)``; ``aten::_addmm_activation``
  same plus ``use_gelu``.
* ``aten::bmm(self[B,M,K], mat2[B,K,N])``; ``aten::baddbmm(self=bias, batch1, batch2, beta,
  alpha)``.
* ``aten::_scaled_mm(self[M,K], mat2[K,N], scale_a, scale_b, bias?, scale_result?,
  out_dtype?, use_fast_accum)``: A and B read at their fp8/fp4 dtype, C written at
  ``out_dtype`` (default: A's dtype), scale tensors read at their dtype.
* ``vllm::rocm_unquantized_gemm(x[*,K], weight[N,K], bias?[N])`` (vLLM ROCm linear).
* ``aiter::gemm_a16w16(A[*,K], B[N,K], bias?, otype?, scale_a?, scale_b?, scale_c?)``: ``otype``
  is a ScalarType code (15 = bf16), default A's dtype.
* ``_C::cutlass_scaled_mm(out[M,N], a[M,K], b[K,N], a_scales, b_scales, bias?)`` (vLLM
  csrc/torch_bindings.cpp).

Packed FP4 (``c10::Float4_e2m1fn_x2``): recorded K counts bytes holding two values each; the
logical K used for FLOPs is twice the recorded one (bytes stay recorded numel x 1 byte).

``aten::linear`` and ``aten::matmul`` are NOT modelled: they are composite ops that launch no
kernel themselves and dispatch to ``aten::addmm``/``aten::mm``/``aten::bmm`` (traces show
``linear -> t + addmm``), which carry the same shapes. Modelling only the implementation op
keeps one row per GEMM with the name the kernels belong to.
"""

from __future__ import annotations

from perfreport.errors import ModelError
from perfreport.models.args import Tensor, arg_dtype, arg_float, nargs, tensor, tensor_opt
from perfreport.models.dtypes import bytes_per_element, precision_of, values_per_element
from perfreport.models.kernel_precision import KernelMath


class Gemm(KernelMath):
    """Shared arithmetic. Subclasses fill the operands in ``_parse``."""

    category = "GEMM"
    kind = "matrix"

    def __init__(self, op):
        super().__init__(op)
        self.batch = 1
        self.bias: Tensor | None = None
        self.extra: list[Tensor] = []  # scale tensors etc., read once
        self.out_dtype: str | None = None
        self._parse()
        a = self.a
        kv = values_per_element(a.dtype)
        self.M, self.K, self.N = self._mkn()
        self.K *= kv
        if self.out_dtype is None:
            self.out_dtype = a.dtype

    # -- to override -------------------------------------------------------------------
    def _parse(self) -> None:
        raise NotImplementedError

    def _mkn(self) -> tuple[int, int, int]:
        """(M, K, N) from A[..., M, K] and B[..., K, N]; checks the inner dimension."""
        a, b = self.a.shape, self.b.shape
        if len(a) < 2 or len(b) < 2 or a[-1] != b[-2]:
            raise ModelError(f"{self.op.name}: shapes {list(a)} @ {list(b)} do not multiply")
        return a[-2], a[-1], b[-1]

    # -- contract ----------------------------------------------------------------------
    def params(self) -> dict:
        return {
            "B": self.batch,
            "M": self.M,
            "N": self.N,
            "K": self.K,
            "bias": self.bias is not None,
            "dtype_A": self.a.dtype,
            "dtype_B": self.b.dtype,
            "dtype_out": self.out_dtype,
            "stride_A": self.a.stride,
            "stride_B": self.b.stride,
        }

    def flops(self) -> float:
        f = 2.0 * self.batch * self.M * self.N * self.K
        if self.bias is not None:
            f += self.batch * self.M * self.N
        return f

    def bytes(self) -> float:
        c = self.batch * self.M * self.N * bytes_per_element(self.out_dtype)
        extra = sum(t.nbytes for t in self.extra)
        bias = self.bias.nbytes if self.bias is not None else 0
        return self.a.nbytes + self.b.nbytes + c + bias + extra

    def precision(self) -> str:
        return precision_of(self.a.dtype)


def _out_or_dtype(model: Gemm, i: int) -> None:
    """Optional trailing arg ``i``: an ``out`` tensor (mm.out) or an ``out_dtype`` code."""
    t = tensor_opt(model.op, i)
    if t is not None:
        model.out_dtype = t.dtype
    elif i < nargs(model.op):
        model.out_dtype = arg_dtype(model.op, i)


class Mm(Gemm):
    """aten::mm(self[M,K], mat2[K,N])."""

    def _parse(self):
        self.a, self.b = tensor(self.op, 0, "self"), tensor(self.op, 1, "mat2")
        if len(self.a.shape) != 2 or len(self.b.shape) != 2:
            raise ModelError(f"{self.op.name}: expects 2-d operands")
        _out_or_dtype(self, 2)


def _beta_zero(op, i: int) -> bool:
    try:
        return arg_float(op, i, 1.0) == 0.0
    except ModelError:
        return False


class Addmm(Gemm):
    """aten::addmm(bias, mat1[M,K], mat2[K,N], beta, alpha) = beta·bias + alpha·(mat1 @ mat2)."""

    def _parse(self):
        self.a, self.b = tensor(self.op, 1, "mat1"), tensor(self.op, 2, "mat2")
        if len(self.a.shape) != 2 or len(self.b.shape) != 2:
            raise ModelError(f"{self.op.name}: expects 2-d mat1/mat2")
        self.bias = None if _beta_zero(self.op, 3) else tensor_opt(self.op, 0)


class Bmm(Gemm):
    """aten::bmm(self[B,M,K], mat2[B,K,N])."""

    def _parse(self):
        self.a, self.b = tensor(self.op, 0, "self"), tensor(self.op, 1, "mat2")
        if len(self.a.shape) != 3 or len(self.b.shape) != 3 or self.a.shape[0] != self.b.shape[0]:
            raise ModelError(f"{self.op.name}: expects [B,M,K] @ [B,K,N]")
        self.batch = self.a.shape[0]
        _out_or_dtype(self, 2)


class Baddbmm(Gemm):
    """aten::baddbmm(bias, batch1[B,M,K], batch2[B,K,N], beta, alpha)."""

    def _parse(self):
        self.a, self.b = tensor(self.op, 1, "batch1"), tensor(self.op, 2, "batch2")
        if len(self.a.shape) != 3 or len(self.b.shape) != 3 or self.a.shape[0] != self.b.shape[0]:
            raise ModelError(f"{self.op.name}: expects [B,M,K] @ [B,K,N]")
        self.batch = self.a.shape[0]
        self.bias = None if _beta_zero(self.op, 3) else tensor_opt(self.op, 0)


class ScaledMm(Gemm):
    """aten::_scaled_mm(self[M,K], mat2[K,N], scale_a, scale_b, bias?, scale_result?,
    out_dtype?, use_fast_accum) — FP8 (or packed FP4) GEMM with scales."""

    def _parse(self):
        op = self.op
        self.a, self.b = tensor(op, 0, "self"), tensor(op, 1, "mat2")
        if len(self.a.shape) != 2 or len(self.b.shape) != 2:
            raise ModelError(f"{op.name}: expects 2-d operands")
        self.extra = [t for t in (tensor_opt(op, 2), tensor_opt(op, 3), tensor_opt(op, 5)) if t]
        self.bias = tensor_opt(op, 4)
        self.out_dtype = arg_dtype(op, 6)

    def params(self) -> dict:
        p = super().params()
        p["scales"] = tuple(t.shape for t in self.extra)
        return p


class _WeightNK(Gemm):
    """Vendor linear: x[*, K] @ weight[N, K]^T (+ bias[N]); M = prod(x.shape[:-1])."""

    x_i, w_i, bias_i, otype_i = 0, 1, 2, None

    def _parse(self):
        op = self.op
        self.a, self.b = tensor(op, self.x_i, "input"), tensor(op, self.w_i, "weight")
        self.bias = tensor_opt(op, self.bias_i) if self.bias_i is not None else None
        if self.otype_i is not None:
            self.out_dtype = arg_dtype(op, self.otype_i)

    def _mkn(self):
        x, w = self.a.shape, self.b.shape
        if len(x) < 1 or len(w) != 2 or x[-1] != w[1]:
            raise ModelError(f"{self.op.name}: shapes {list(x)} x {list(w)}^T do not multiply")
        m = 1
        for d in x[:-1]:
            m *= d
        return m, x[-1], w[0]


class RocmUnquantizedGemm(_WeightNK):
    """vllm::rocm_unquantized_gemm(x[*,K], weight[N,K], bias?[N])."""


class AiterGemmA16W16(_WeightNK):
    """aiter::gemm_a16w16(A[*,K], B[N,K], bias?, otype?, scale_a?, scale_b?, scale_c?)."""

    otype_i = 3

    def _parse(self):
        super()._parse()
        self.extra = [t for t in (tensor_opt(self.op, i) for i in (4, 5, 6)) if t]


class CutlassScaledMm(Gemm):
    """_C::cutlass_scaled_mm(out[M,N], a[M,K], b[K,N], a_scales, b_scales, bias?)."""

    def _parse(self):
        op = self.op
        out = tensor(op, 0, "out")
        self.a, self.b = tensor(op, 1, "a"), tensor(op, 2, "b")
        self.out_dtype = out.dtype
        self.extra = [t for t in (tensor_opt(op, 3), tensor_opt(op, 4)) if t]
        self.bias = tensor_opt(op, 5)


__all__ = [
    "Gemm",
    "Mm",
    "Addmm",
    "Bmm",
    "Baddbmm",
    "ScaledMm",
    "RocmUnquantizedGemm",
    "AiterGemmA16W16",
    "CutlassScaledMm",
]
