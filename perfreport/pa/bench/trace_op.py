"""The custom op ``perfreport::paged_attention_decode`` that ``bench-pa --trace`` records.

Positional signature (what the profiler records as Input Dims / Input type / Concrete Inputs, and
what the perf model for this name reads)::

    perfreport::paged_attention_decode(Tensor(a!) out, Tensor query, Tensor key_cache,
        Tensor value_cache, Tensor block_tables, Tensor context_lens, Tensor? k_scale,
        Tensor? v_scale, float scale, str kv_layout) -> ()

The op has one implementation that forwards to the backend chosen with :func:`dispatch_to`
(ours, the torch reference or a vendor kernel), so the trace shows the backend's kernels under
the op. Note: the profiler records a ``str`` argument's type and value as empty strings; the
model reads the layout from the K cache rank when the string is missing.
"""

from __future__ import annotations

import contextlib
from typing import Callable, Optional

import torch

from perfreport.pa.bench.case import OP_NAME, PACase

_impl: Optional[Callable[..., None]] = None


def _define():
    try:
        return getattr(torch.ops.perfreport, "paged_attention_decode")
    except (AttributeError, RuntimeError):
        pass

    @torch.library.custom_op(OP_NAME, mutates_args=("out",))
    def paged_attention_decode(
        out: torch.Tensor,
        query: torch.Tensor,
        key_cache: torch.Tensor,
        value_cache: torch.Tensor,
        block_tables: torch.Tensor,
        context_lens: torch.Tensor,
        k_scale: Optional[torch.Tensor],
        v_scale: Optional[torch.Tensor],
        scale: float,
        kv_layout: str,
    ) -> None:
        if _impl is None:
            raise RuntimeError(f"{OP_NAME}: no backend selected (use pa_op.dispatch_to)")
        _impl(out, query, key_cache, value_cache, block_tables, context_lens, k_scale, v_scale, scale, kv_layout)

    return torch.ops.perfreport.paged_attention_decode


OP = _define()


@contextlib.contextmanager
def dispatch_to(fn: Callable[..., None]):
    """Within the block, the op runs ``fn(out, query, key_cache, ..., scale, kv_layout)``."""
    global _impl
    prev, _impl = _impl, fn
    try:
        yield OP
    finally:
        _impl = prev


def call(out, inputs, case: PACase) -> None:
    """One call of the op with this case's tensors (``inputs``: a PAInputs)."""
    OP(
        out,
        inputs.query,
        inputs.key_cache,
        inputs.value_cache,
        inputs.block_tables,
        inputs.context_lens,
        inputs.k_scale,
        inputs.v_scale,
        float(case.scale),
        case.kernel_layout,
    )


__all__ = ["OP", "call", "dispatch_to"]
