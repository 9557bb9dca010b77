"""Stand-in normalization ops for the vision fixture, registered under their real names.

``aten::miopen_batch_norm_backward`` (the real aten schema, which has no CPU kernel: one is
registered here) and ``aiter::_groupnorm_run(y, workspace, input, num_groups, weight, bias,
eps)``. Pooling and resampling need no stand-in: the real aten ops run on the CPU.
"""

from __future__ import annotations

import torch

from stand_in_library import define, impl


def _miopen_bn_backward(input, grad_output, weight, running_mean, running_var, save_mean, save_var, epsilon):
    """Batch-norm backward over (N, spatial) per channel, ``save_var`` being 1/σ:
    gx = w/σ/n · (n·gy − Σgy − x̂·Σ(gy·x̂)), gw = Σ(gy·x̂), gb = Σgy."""
    dims = [0] + list(range(2, input.dim()))
    shape = [1, -1] + [1] * (input.dim() - 2)
    xhat = (input - save_mean.view(shape)) * save_var.view(shape)
    gb = grad_output.sum(dims)
    gw = (grad_output * xhat).sum(dims)
    n = input.numel() / input.shape[1]
    gx = weight.view(shape) * save_var.view(shape) / n * (n * grad_output - gb.view(shape) - xhat * gw.view(shape))
    return gx, gw, gb


def _groupnorm_run(y, workspace, input, num_groups, weight, bias, eps):
    y.copy_(torch.nn.functional.group_norm(input, num_groups, weight, bias, eps))


def register() -> None:
    define(
        "aiter",
        "_groupnorm_run(Tensor(a!) y, Tensor(b!) workspace, Tensor input, "
        "int num_groups, Tensor weight, Tensor bias, float eps) -> ()",
        _groupnorm_run,
    )
    impl("aten", "miopen_batch_norm_backward", _miopen_bn_backward)
