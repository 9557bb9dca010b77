"""Convolution models, any number of spatial dims (1-d, 2-d, 3-d ...).

Forward (input [N, C_in, *in], weight [C_out, C_in/groups, *k]):
  out_i = floor((in_i + 2·pad_i − dil_i·(k_i − 1) − 1) / stride_i) + 1
  FLOPs = 2·N·C_out·prod(out)·(C_in/groups)·prod(k)  (+ N·C_out·prod(out) with a bias)
Transposed (weight [C_in, C_out/groups, *k]):
  out_i = (in_i − 1)·stride_i − 2·pad_i + dil_i·(k_i − 1) + output_padding_i + 1
  FLOPs = 2·N·C_in·prod(in)·(C_out/groups)·prod(k)  (every input pixel scatters a kernel)
Bytes = input + weight + output (+ bias), each at its dtype (output at the input's dtype).
Backward (``aten::convolution_backward``, ``output_mask`` = [grad_input, grad_weight,
  grad_bias]): grad_input and grad_weight each cost the forward's MAC FLOPs, grad_bias
  N·C_out·prod(out). Bytes = grad_output + (weight read, grad_input written if mask[0]) +
  (input read, grad_weight written if mask[1]) + (grad_bias written if mask[2]).
Signatures (PyTorch native_functions.yaml, torch 2.13 schemas):
  convolution / _convolution(input, weight, bias?, stride, padding, dilation, transposed,
  output_padding, groups, ...); conv1d/2d/3d(input, weight, bias?, stride, padding, dilation,
  groups) (padding may be 'same'/'valid'); cudnn_convolution(self, weight, padding, stride,
  dilation, groups, ...) (no bias, padding before stride); miopen_convolution(self, weight,
  bias?, padding, stride, dilation, groups, ...); convolution_backward(grad_output, input,
  weight, bias_sizes?, stride, padding, dilation, transposed, output_padding, groups,
  output_mask).
"""

from __future__ import annotations

from math import prod

from perfreport.errors import ModelError
from perfreport.models.args import arg_bool, arg_bool_list, arg_int, arg_int_list, concrete, tensor, tensor_opt
from perfreport.models.dtypes import bytes_per_element, precision_of
from perfreport.models.kernel_precision import KernelMath


class Conv(KernelMath):
    category = "CONV_fwd"
    kind = "matrix"
    tf32_default = True  # cuDNN convolutions: torch.backends.cudnn.allow_tf32 defaults to True
    # argument indices: bias, stride, padding, dilation, transposed, output_padding, groups
    layout = dict(bias=2, stride=3, padding=4, dilation=5, transposed=6, out_pad=7, groups=8)
    x_i, w_i = 0, 1

    def __init__(self, op):
        super().__init__(op)
        L = self.layout
        self.x, self.w = tensor(op, self.x_i, "input"), tensor(op, self.w_i, "weight")
        nd = len(self.x.shape) - 2
        if nd < 1 or len(self.w.shape) != nd + 2:
            raise ModelError(
                f"{op.name}: input {list(self.x.shape)} / weight {list(self.w.shape)} are not [N, C, *spatial]"
            )
        self.bias = tensor_opt(op, L["bias"]) if L.get("bias") is not None else None
        self.groups = arg_int(op, L["groups"], 1) or 1
        self.transposed = bool(arg_bool(op, L["transposed"], False)) if L.get("transposed") else False

        def vec(key, default):
            if L.get(key) is None:
                return [default] * nd
            v = arg_int_list(op, L[key], [default])
            return v * nd if len(v) == 1 else v

        self.stride, self.dilation = vec("stride", 1), vec("dilation", 1)
        self.out_pad = vec("out_pad", 0)
        pad_s = concrete(op, L["padding"]).strip().strip("'\"")
        self.kshape = list(self.w.shape[2:])
        self.in_sp = list(self.x.shape[2:])
        if pad_s == "same":
            self.padding, self.out_sp = None, list(self.in_sp)
        else:
            self.padding = [0] * nd if pad_s == "valid" else vec("padding", 0)
            if not (len(self.stride) == len(self.padding) == len(self.dilation) == nd):
                raise ModelError(f"{op.name}: stride/padding/dilation do not have {nd} dims")
            self.out_sp = [self._out(i) for i in range(nd)]
        if self.transposed:
            self.c_in, self.c_out = self.x.shape[1], self.w.shape[1] * self.groups
        else:
            self.c_in, self.c_out = self.x.shape[1], self.w.shape[0]
        if self.c_in % self.groups or min(self.out_sp) <= 0:
            raise ModelError(f"{op.name}: inconsistent channels/groups or empty output")
        self.N = self.x.shape[0]

    def _out(self, i: int) -> int:
        s, p, d, k, n = (self.stride[i], self.padding[i], self.dilation[i], self.kshape[i], self.in_sp[i])
        if self.transposed:
            return (n - 1) * s - 2 * p + d * (k - 1) + self.out_pad[i] + 1
        return (n + 2 * p - d * (k - 1) - 1) // s + 1

    def params(self) -> dict:
        return {
            "N": self.N,
            "C_in": self.c_in,
            "C_out": self.c_out,
            "input_spatial": tuple(self.in_sp),
            "kernel": tuple(self.kshape),
            "output_spatial": tuple(self.out_sp),
            "stride": tuple(self.stride),
            "padding": tuple(self.padding) if self.padding else "same",
            "dilation": tuple(self.dilation),
            "groups": self.groups,
            "transposed": self.transposed,
            "bias": self.bias is not None,
            "dtype": self.x.dtype,
        }

    def mac_flops(self) -> float:
        if self.transposed:
            return 2.0 * self.N * self.c_in * prod(self.in_sp) * (self.c_out // self.groups) * prod(self.kshape)
        return 2.0 * self.N * self.c_out * prod(self.out_sp) * (self.c_in // self.groups) * prod(self.kshape)

    def out_elems(self) -> int:
        return self.N * self.c_out * prod(self.out_sp)

    def flops(self) -> float:
        return self.mac_flops() + (self.out_elems() if self.bias is not None else 0)

    def bytes(self) -> float:
        out = self.out_elems() * bytes_per_element(self.x.dtype)
        return self.x.nbytes + self.w.nbytes + out + (self.bias.nbytes if self.bias else 0)

    def precision(self) -> str:
        return precision_of(self.x.dtype)


class ConvNd(Conv):
    """aten::conv1d/conv2d/conv3d(input, weight, bias?, stride, padding, dilation, groups)."""

    layout = dict(bias=2, stride=3, padding=4, dilation=5, groups=6)


class CudnnConv(Conv):
    """aten::cudnn_convolution(self, weight, padding, stride, dilation, groups, ...)."""

    layout = dict(padding=2, stride=3, dilation=4, groups=5)


class MiopenConv(Conv):
    """aten::miopen_convolution(self, weight, bias?, padding, stride, dilation, groups, ...)."""

    layout = dict(bias=2, padding=3, stride=4, dilation=5, groups=6)
    tf32_default = False  # MIOpen: cudnn.allow_tf32 does not apply (ROCm runs FP32 convolutions as FP32)


class ConvBackward(Conv):
    """aten::convolution_backward(grad_output, input, weight, bias_sizes?, stride, padding,
    dilation, transposed, output_padding, groups, output_mask)."""

    category = "CONV_bwd"
    layout = dict(bias=None, stride=4, padding=5, dilation=6, transposed=7, out_pad=8, groups=9)
    x_i, w_i = 1, 2

    def __init__(self, op):
        super().__init__(op)
        self.g = tensor(op, 0, "grad_output")
        self.mask = ((arg_bool_list(op, 10) or [True, True, True]) + [False] * 3)[:3]
        self.bias_sizes = arg_int_list(op, 3)

    def params(self) -> dict:
        p = super().params()
        p["bias"] = bool(self.bias_sizes)
        p["output_mask"] = tuple(self.mask)
        return p

    def flops(self) -> float:
        f = self.mac_flops() * (self.mask[0] + self.mask[1])
        return f + (self.out_elems() if self.mask[2] else 0)

    def bytes(self) -> float:
        b = self.g.nbytes
        if self.mask[0]:
            b += self.w.nbytes + self.x.nbytes
        if self.mask[1]:
            b += self.x.nbytes + self.w.nbytes
        if self.mask[2]:
            b += self.c_out * bytes_per_element(self.g.dtype)
        return b


__all__ = ["Conv", "ConvNd", "CudnnConv", "MiopenConv", "ConvBackward"]
