"""bench-pa backends: one module per implementation, loaded by name.

Each module exposes ``PACKAGE`` (what to install to enable it) and
``prepare(inputs, case, opts) -> Prepared``. ``prepare`` converts our caches to the backend's
layout ONCE (outside the timed region), allocates the output and any workspace, and returns a
closure that performs exactly one launch; it raises :class:`Skip` with a one-line reason when the
package is missing or the case is outside what the backend supports.

``opts`` keys: ``partitions`` ("auto" or int), ``on_gpu`` (bool), ``fp8_mma`` and ``partials``
(our kernel's knobs).

Errors: :class:`Skip` (package missing, wrong platform) is reported once per backend;
:class:`SkipRow` (this case is outside what the backend supports) and any other exception a
vendor backend raises while planning or launching become a ``skipped`` row with the reason, so
one vendor's failure never aborts the bench.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any, Callable

NAMES = ("triton", "torch", "aiter", "flydsl", "vllm", "flashinfer")


class Skip(Exception):
    """The backend cannot run here; the message says why (and what to install)."""


class SkipRow(Skip):
    """The backend cannot run this case (a shape, dtype or layout it does not support)."""


@dataclass
class Prepared:
    run: Callable[[], Any]  # one launch; writes ``out``
    out: Any  # output tensor [S*q_len, H_Q, Dv]
    partitions: str = ""  # split-K partitions used, when the backend has the notion
    note: str = ""


def load(name: str):
    """The backend module for ``name`` (see :data:`NAMES`)."""
    if name not in NAMES:
        raise ValueError(f"unknown backend {name!r} (choose from {', '.join(NAMES)})")
    return importlib.import_module(f"perfreport.pa.bench.backends.{name}_backend")


def require(module: str, package: str):
    """Import ``module`` or raise Skip naming the package that provides it."""
    try:
        return importlib.import_module(module)
    except Exception as exc:  # ImportError, or a broken install raising anything
        why = str(exc).splitlines()[0][:80] if str(exc) else type(exc).__name__
        raise Skip(f"install the '{package}' package to enable it ({why})") from None


def nhd_caches(inputs):
    """Our caches in NHD (converted once when the case is 5D)."""
    from perfreport.pa.kernel.cache import fived_to_nhd

    if inputs.layout == "5D":
        return fived_to_nhd(inputs.key_cache, inputs.value_cache)
    return inputs.key_cache, inputs.value_cache


def empty_output(inputs, case):
    """The bf16 output ``[num_seqs * q_len, H_Q, Dv]`` every backend writes."""
    import torch

    rows, hq, _ = inputs.query.shape
    return torch.empty(rows, hq, case.v_head_dim, dtype=torch.bfloat16, device=inputs.query.device)


def query_start_loc(case, device):
    """Cumulative query offsets ``[0, q, 2q, ...]`` (int32, ``batch + 1`` entries)."""
    import torch

    return torch.arange(0, case.batch + 1, dtype=torch.int32, device=device) * case.q_len


__all__ = ["NAMES", "Prepared", "Skip", "SkipRow", "empty_output", "load", "nhd_caches", "query_start_loc", "require"]
