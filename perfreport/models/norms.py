"""Normalisation models: RMSNorm (aten and vendor kernels), layer/batch/group norm, backward.

RMSNorm  y = x / sqrt(mean(x²) + eps) · w   (optionally fused with a residual add first:
  x = x + residual; the sum is written back as the new residual).
  FLOPs = 4·numel (square, accumulate, scale by 1/rms, scale by w) + 2·rows (mean divide,
  rsqrt) + numel when the residual add is fused. rows = numel / hidden.
  Bytes = x read + y written (+ residual read + new residual written) + w, each at its
  dtype. The per-row fp32 rstd that ``aten::_fused_rms_norm`` saves is not counted (1/hidden).
LayerNorm / GroupNorm  y = (x − mean)/sqrt(var + eps) · w + b:
  FLOPs = 5·numel (sum, subtract, square, accumulate, scale) + numel per affine tensor
  (w, b) + 3 per normalised group (two divides, rsqrt). Bytes = x + y + w + b; LayerNorm
  also writes the mean and rstd it saves for the backward, one each per row in the
  accumulation dtype (``native_layer_norm`` returns (out, mean, rstd), mean/rstd of shape
  [M] at fp32 for 16/32-bit inputs and fp64 for fp64: PyTorch native_functions.yaml and
  aten/src/ATen/native/cuda/layer_norm_kernel.cu) -> + 2·rows·4 bytes (8 for fp64).
BatchNorm: FLOPs = 4·numel at inference (subtract running mean, scale, ·w, +b) and 7·numel
  when training (+ sum, square, accumulate for the batch statistics). Bytes = x + y + the
  per-channel tensors (w, b, running mean/var).
Backward (``Norm_bwd``), an estimate: dx costs 8/element (recompute x̂, two row reductions,
  combine), dw 2/element, db 1/element, each only if its ``output_mask`` entry is set.
  Bytes = grad_out + input + small per-row/per-channel tensors read + grads written.
Signatures: PyTorch native_functions.yaml (torch 2.13 schemas); vendor kernels as recorded in
``shared/traces/inference`` and their sources: ``_C::rms_norm(out, input, weight, eps)``,
``_C::fused_add_rms_norm(input!, residual!, weight, eps)`` (vLLM csrc/torch_bindings.cpp),
``sgl_kernel::rmsnorm(out, input, weight, eps, pdl)`` / ``fused_add_rmsnorm(input!,
residual!, weight, eps, pdl)``, ``aiter::rms_norm(input, weight, eps, use_msr)``,
``aiter::rmsnorm(out, input, weight, eps)``, ``aiter::add_rmsnorm`` and
``aiter::rmsnorm2d_fwd_with_add[_ck](out, input, residual_in, residual_out, weight, eps[, ..])``,
``vllm::rocm_aiter_rms_norm(x, weight, eps)``, ``vllm::rocm_aiter_rmsnorm2d_fwd_with_add(x,
residual, weight, eps)``.
"""

from __future__ import annotations

from math import prod

from perfreport.errors import ModelError
from perfreport.models.args import arg_bool, arg_bool_list, arg_int, arg_int_list, tensor, tensor_opt
from perfreport.models.base import PerfModel
from perfreport.models.dtypes import bytes_per_element, precision_of


class RMSNorm(PerfModel):
    """Layout given by class attributes: argument indices of x, weight, residual, out."""

    category = "RMSNorm_fwd"
    kind = "vector"
    x_i, w_i, res_i, out_i = 0, 1, None, None
    shape_i: int | None = None  # aten: normalized_shape argument

    def __init__(self, op):
        super().__init__(op)
        self.x = tensor(op, self.x_i, "input")
        self.w = tensor_opt(op, self.w_i) if self.w_i is not None else None
        self.res = tensor(op, self.res_i, "residual") if self.res_i is not None else None
        out = tensor(op, self.out_i, "out") if self.out_i is not None else None
        self.out_dtype = out.dtype if out is not None else self.x.dtype
        if self.shape_i is not None:
            ns = arg_int_list(op, self.shape_i)
            if not ns:
                raise ModelError(f"{op.name}: normalized_shape not recorded")
            self.hidden = prod(ns)
        else:
            self.hidden = self.w.numel if self.w is not None else self.x.shape[-1]
        if not self.x.shape or self.hidden <= 0 or self.x.numel % self.hidden:
            raise ModelError(f"{op.name}: input {list(self.x.shape)} not divisible by hidden {self.hidden}")
        self.rows = self.x.numel // self.hidden

    def params(self) -> dict:
        return {
            "op_shape": self.x.shape,
            "num_channels": self.hidden,
            "has_residual": self.res is not None,
            "dtype_in": self.x.dtype,
            "dtype_out": self.out_dtype,
            "stride_input": self.x.stride,
        }

    def flops(self) -> float:
        n = self.x.numel
        return 4.0 * n + 2.0 * self.rows + (n if self.res is not None else 0)

    def bytes(self) -> float:
        n = self.x.numel
        b = self.x.nbytes + n * bytes_per_element(self.out_dtype)
        if self.res is not None:
            b += 2 * self.res.nbytes
        if self.w is not None:
            b += self.w.nbytes
        return b

    def precision(self) -> str:
        return precision_of(self.x.dtype)


class AtenRMSNorm(RMSNorm):
    """aten::rms_norm / aten::_fused_rms_norm(input, normalized_shape, weight?, eps?)."""

    x_i, w_i, shape_i = 0, 2, 1


class RMSNormOutFirst(RMSNorm):
    """(out, input, weight, eps, ...): _C::rms_norm, sgl_kernel::rmsnorm, aiter::rmsnorm,
    _C::rms_norm_static_fp8_quant(out, input, weight, scale, eps)."""

    out_i, x_i, w_i = 0, 1, 2


class RMSNormInputFirst(RMSNorm):
    """(input, weight, eps, ...) -> out: aiter::rms_norm, aiter::rmsnorm2d_fwd,
    vllm::rocm_aiter_rms_norm."""

    x_i, w_i = 0, 1


class FusedAddRMSNormInplace(RMSNorm):
    """(input!, residual!, weight, eps, ...): _C::fused_add_rms_norm,
    sgl_kernel::fused_add_rmsnorm, vllm::rocm_aiter_rmsnorm2d_fwd_with_add."""

    x_i, res_i, w_i = 0, 1, 2


class FusedAddRMSNormOut(RMSNorm):
    """(out, input, residual_in, residual_out, weight, eps, ...): aiter::add_rmsnorm,
    aiter::rmsnorm2d_fwd_with_add[_ck]."""

    out_i, x_i, res_i, w_i = 0, 1, 2, 4


class FusedAddRMSNormQuant(RMSNorm):
    """_C::fused_add_rms_norm_static_fp8_quant(out, input, residual!, weight, scale, eps)."""

    out_i, x_i, res_i, w_i = 0, 1, 2, 3


# ---- layer / group / batch norm --------------------------------------------------------
class _Norm(PerfModel):
    category = "Norm_fwd"
    kind = "vector"

    def _finish(self, groups: int, affine: list):
        self.affine = [t for t in affine if t is not None]
        self.groups = groups

    def params(self) -> dict:
        return {
            "op_shape": self.x.shape,
            "num_groups": self.groups,
            "affine": len(self.affine) > 0,
            "dtype": self.x.dtype,
            "stride_input": self.x.stride,
        }

    def flops(self) -> float:
        return (5.0 + len(self.affine)) * self.x.numel + 3.0 * self.groups

    def bytes(self) -> float:
        return 2 * self.x.nbytes + sum(t.nbytes for t in self.affine)

    def precision(self) -> str:
        return precision_of(self.x.dtype)


class LayerNorm(_Norm):
    """aten::layer_norm / native_layer_norm(input, normalized_shape, weight?, bias?, eps, ...)."""

    def __init__(self, op):
        super().__init__(op)
        self.x = tensor(op, 0, "input")
        ns = arg_int_list(op, 1)
        if not ns or self.x.numel % prod(ns):
            raise ModelError(f"{op.name}: normalized_shape {ns} does not fit the input")
        self._finish(self.x.numel // prod(ns), [tensor_opt(op, 2), tensor_opt(op, 3)])

    def bytes(self) -> float:
        stat = 8 if bytes_per_element(self.x.dtype) == 8 else 4  # saved mean, rstd
        return super().bytes() + 2 * self.groups * stat


class GroupNorm(_Norm):
    """aten::group_norm(input, num_groups, weight?, bias?, eps, cudnn) and
    native_group_norm(input, weight?, bias?, N, C, HxW, group, eps)."""

    def __init__(self, op):
        super().__init__(op)
        self.x = tensor(op, 0, "input")
        if op.name.endswith("native_group_norm"):
            g, aff = arg_int(op, 6), [tensor_opt(op, 1), tensor_opt(op, 2)]
        else:
            g, aff = arg_int(op, 1), [tensor_opt(op, 2), tensor_opt(op, 3)]
        if not g or not self.x.shape:
            raise ModelError(f"{op.name}: num_groups not recorded")
        self._finish(self.x.shape[0] * g, aff)


class AiterGroupNorm(_Norm):
    """aiter::_groupnorm_run: (input, num_groups, weight, bias, eps) -> y (older aiter) or
    (y, workspace, input, num_groups, weight, bias, eps) (caller-allocated output; aiter
    csrc/pybind groupnorm). Same arithmetic as group_norm; the workspace (per-group
    statistics scratch) is not counted."""

    def __init__(self, op):
        super().__init__(op)
        types = op.args.get("Input type") or []
        x_i = 0 if len(types) > 1 and types[1] == "Scalar" else 2
        self.x = tensor(op, x_i, "input")
        g = arg_int(op, x_i + 1)
        if not g or not self.x.shape:
            raise ModelError(f"{op.name}: num_groups not recorded")
        self._finish(self.x.shape[0] * g, [tensor_opt(op, x_i + 2), tensor_opt(op, x_i + 3)])


class BatchNorm(_Norm):
    """aten::batch_norm / native_batch_norm / cudnn_batch_norm / miopen_batch_norm /
    _native_batch_norm_legit(input, weight?, bias?, running_mean?, running_var?, training, ...);
    _native_batch_norm_legit_no_training has no ``training`` argument."""

    def __init__(self, op):
        super().__init__(op)
        self.x = tensor(op, 0, "input")
        if len(self.x.shape) < 2:
            raise ModelError(f"{op.name}: expects [N, C, ...] input")
        self.training = False if op.name.endswith("no_training") else bool(arg_bool(op, 5, False))
        self._finish(self.x.shape[1], [tensor_opt(op, i) for i in (1, 2, 3, 4)])

    def params(self) -> dict:
        p = super().params()
        p["training"] = self.training
        return p

    def flops(self) -> float:
        return (7.0 if self.training else 4.0) * self.x.numel


class NormBackward(PerfModel):
    """native_layer_norm_backward(grad_out, input, normalized_shape, mean, rstd, weight?,
    bias?, output_mask), native_group_norm_backward(grad_out, input, mean, rstd, weight?, N,
    C, HxW, group, output_mask), native_batch_norm_backward(grad_out, input, weight?, rm?,
    rv?, save_mean?, save_invstd?, train, eps, output_mask), _fused_rms_norm_backward(
    grad_out, input, normalized_shape, rstd, weight?, output_mask)."""

    category = "Norm_bwd"
    kind = "vector"
    _LAYOUT = {  # name suffix -> (small read tensors, weight index, output_mask index)
        "native_layer_norm_backward": ((3, 4, 5), 5, 7),
        "native_group_norm_backward": ((2, 3, 4), 4, 9),
        "native_batch_norm_backward": ((2, 3, 4, 5, 6), 2, 9),
        "_fused_rms_norm_backward": ((3, 4), 4, 5),
    }

    def __init__(self, op):
        super().__init__(op)
        key = op.name.split("::")[-1]
        if key not in self._LAYOUT:
            raise ModelError(f"{op.name}: unknown norm backward layout")
        small, w_i, m_i = self._LAYOUT[key]
        self.g, self.x = tensor(op, 0, "grad_out"), tensor(op, 1, "input")
        self.small = [t for t in (tensor_opt(op, i) for i in small) if t is not None]
        self.w = tensor_opt(op, w_i)
        mask = arg_bool_list(op, m_i) or [True, True, True]
        self.mask = (mask + [False] * 3)[:3]
        if key == "_fused_rms_norm_backward":
            self.mask[2] = False

    def params(self) -> dict:
        return {"op_shape": self.x.shape, "dtype": self.x.dtype, "output_mask": tuple(self.mask)}

    def flops(self) -> float:
        n = self.x.numel
        return float(n * (8 * self.mask[0] + 2 * self.mask[1] + 1 * self.mask[2]))

    def bytes(self) -> float:
        b = self.g.nbytes + self.x.nbytes + sum(t.nbytes for t in self.small)
        if self.mask[0]:
            b += self.x.nbytes
        wb = self.w.nbytes if self.w is not None else 0
        return b + wb * (self.mask[1] + self.mask[2])

    def precision(self) -> str:
        return precision_of(self.x.dtype)


class MiopenBatchNormBackward(NormBackward):
    """aten::miopen_batch_norm_backward(input, grad_output, weight, running_mean?,
    running_var?, save_mean?, save_var?, epsilon) and cudnn_batch_norm_backward(...,
    reserveSpace): input FIRST, grad_output second; all three gradients computed (no
    output_mask). Same arithmetic as native_batch_norm_backward."""

    def __init__(self, op):
        PerfModel.__init__(self, op)
        self.x, self.g = tensor(op, 0, "input"), tensor(op, 1, "grad_output")
        self.small = [t for t in (tensor_opt(op, i) for i in (3, 4, 5, 6)) if t is not None]
        self.w = tensor_opt(op, 2)
        self.mask = [True, True, True]


__all__ = [
    "RMSNorm",
    "AtenRMSNorm",
    "RMSNormOutFirst",
    "RMSNormInputFirst",
    "FusedAddRMSNormInplace",
    "FusedAddRMSNormOut",
    "FusedAddRMSNormQuant",
    "LayerNorm",
    "GroupNorm",
    "AiterGroupNorm",
    "BatchNorm",
    "NormBackward",
    "MiopenBatchNormBackward",
]
