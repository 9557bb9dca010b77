"""Stand-in FP8 activation-quantization ops (vLLM ``_C``), registered under their real names.

``static_scaled_fp8_quant`` / ``dynamic_scaled_fp8_quant`` / ``dynamic_per_token_scaled_fp8_quant``
(result, input, scale[, scale_ub]) and ``per_token_group_fp8_quant(input, output_q, output_s,
group_size, eps, fp8_min, fp8_max, scale_ue8m0)``, quantizing to e4m3 (max 448).
"""

from __future__ import annotations

import torch

from stand_in_library import define

FP8_MAX = 448.0  # largest finite float8_e4m3fn value (OCP FP8 spec: 1.75 · 2^8)


def _q(x, scale):
    return (x.float() / scale).clamp(-FP8_MAX, FP8_MAX).to(torch.float8_e4m3fn)


def _quant_static(result, input, scale):
    result.copy_(_q(input, scale))


def _quant_dynamic_tensor(result, input, scale):
    scale.fill_(float(input.float().abs().max()) / FP8_MAX)
    result.copy_(_q(input, scale))


def _quant_dynamic_token(result, input, scale, scale_ub=None):
    scale.copy_(input.float().abs().amax(-1, keepdim=True) / FP8_MAX)
    result.copy_(_q(input, scale))


def _quant_group(input, output_q, output_s, group_size, eps, fp8_min, fp8_max, scale_ue8m0):
    g = input.float().reshape(input.shape[0], -1, group_size)
    s = g.abs().amax(-1, keepdim=True).clamp_min(eps) / fp8_max
    output_s.copy_(s.squeeze(-1))
    output_q.copy_((g / s).clamp(fp8_min, fp8_max).reshape(input.shape).to(output_q.dtype))


def register() -> None:
    for name, fn in (
        ("static_scaled_fp8_quant", _quant_static),
        ("dynamic_scaled_fp8_quant", _quant_dynamic_tensor),
        ("dynamic_per_token_scaled_fp8_quant", _quant_dynamic_token),
    ):
        tail = ", Tensor? scale_ub=None" if "per_token" in name else ""
        define("_C", f"{name}(Tensor(a!) result, Tensor input, Tensor(b!) scale{tail}) -> ()", fn)
    define(
        "_C",
        "per_token_group_fp8_quant(Tensor input, Tensor(a!) output_q, "
        "Tensor(b!) output_s, int group_size, float eps, float fp8_min, float fp8_max, "
        "bool scale_ue8m0) -> ()",
        _quant_group,
    )
