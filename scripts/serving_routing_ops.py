"""Stand-ins for the triton_kernels MoE routing autograd Functions.

``TopK.apply`` / ``SortTokens.apply`` record cpu_ops named by class (``TopK``, ``SortTokens``),
with the positional arguments of triton_kernels' ``topk`` and ``sort_tokens``. Used inside
``vllm::moe_forward`` by scripts/serving_moe_ops.py and scripts/capture_moe_ep_fixtures.py.
"""

from __future__ import annotations

import torch


class TopK(torch.autograd.Function):
    """(x[T, E], k, apply_softmax, dim, return_bitmatrix, y_indx, n_rows) -> (values [T, k],
    int16 expert ids [T, k], uint32 bitmatrix [T, ceil(E/32)])."""

    @staticmethod
    def forward(ctx, x, k, apply_softmax, dim, return_bitmatrix, y_indx, n_rows):
        vals, idx = torch.topk(x.float(), k, dim=dim)
        if apply_softmax:
            vals = torch.softmax(vals, dim=-1)
        words = (x.shape[1] + 31) // 32
        bits = torch.zeros(x.shape[0], words, dtype=torch.int64)
        bits.scatter_add_(1, idx // 32, torch.ones_like(idx) << (idx % 32))
        return vals.to(x.dtype), idx.to(torch.int16), bits.to(torch.uint32)


class Bitmatrix:  # a Python object: the profiler does not record it
    def __init__(self, data):
        self.data = data


class SortTokens(torch.autograd.Function):
    """(expt_scal, expt_indx, n_expts_tot, bitmatrix) -> (per-expert histogram, the token
    slots sorted by expert, their gate values in that order)."""

    @staticmethod
    def forward(ctx, expt_scal, expt_indx, n_expts_tot, bitmatrix):
        flat = expt_indx.reshape(-1).long()
        hist = torch.bincount(flat, minlength=n_expts_tot).to(torch.int32)
        order = torch.argsort(flat, stable=True).to(torch.int32)
        return hist, order, expt_scal.reshape(-1)[order.long()]
