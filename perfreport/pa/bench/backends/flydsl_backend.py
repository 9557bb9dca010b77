"""``flydsl``: FlyDSL's tile paged-attention decode kernel ``pa_decode_tile`` (AMD gfx942/gfx950).

The kernel reads the 5D vectorized layout (K ``[blocks, H_KV, Dk/x, page, x]``, V
``[blocks, H_KV, Dv, page]`` or ``[blocks, H_KV, page/x, Dv, x]``); NHD caches are converted once.
The released kernel takes FP8 KV caches only (BF16 vectorized-5D KV is a later upstream change),
so BF16 rows are skipped with that reason. UNVERIFIED here: written without FlyDSL or an AMD GPU
at hand. The call binds arguments by name from the function's signature; when the names are
not the ones we know, the backend is skipped with the signature it found.
"""

from __future__ import annotations

import importlib
import inspect

import torch

from perfreport.pa.bench.backends import Prepared, Skip, SkipRow, empty_output, require
from perfreport.pa.kernel.cache import nhd_to_5d

PACKAGE = "flydsl"
_MODULES = (
    "kernels.attention.pa_decode_tile",
    "flydsl.kernels.attention.pa_decode_tile",
    "aiter.ops.flydsl.pa_decode_tile",
)


def _find():
    for m in _MODULES:
        try:
            fn = getattr(importlib.import_module(m), "pa_decode_tile", None)
        except Exception:
            continue
        if fn is not None:
            return fn
    return None


def prepare(inputs, case, opts) -> Prepared:
    require("flydsl", PACKAGE)
    if not opts.get("on_gpu") or not torch.version.hip:
        raise Skip("flydsl runs on AMD GPUs only (ROCm build of torch)")
    fn = _find()
    if fn is None:
        raise Skip("flydsl is installed but pa_decode_tile was not found")
    if case.kv_dtype != "fp8":
        raise SkipRow("flydsl pa_decode_tile takes FP8 KV caches only")
    k, v = (
        (inputs.key_cache, inputs.value_cache)
        if case.layout != "NHD"
        else nhd_to_5d(inputs.key_cache, inputs.value_cache)
    )
    dev = inputs.query.device
    out = empty_output(inputs, case)
    one = torch.ones(1, dtype=torch.float32, device=dev)
    known = {
        "output": out,
        "out": out,
        "query": inputs.query,
        "key_cache": k,
        "value_cache": v,
        "block_tables": inputs.block_tables,
        "context_lengths": inputs.context_lens,
        "context_lens": inputs.context_lens,
        "softmax_scale": inputs.scale,
        "scale": inputs.scale,
        "key_scale": inputs.k_scale if inputs.k_scale is not None else one,
        "k_scale": inputs.k_scale if inputs.k_scale is not None else one,
        "value_scale": inputs.v_scale if inputs.v_scale is not None else one,
        "v_scale": inputs.v_scale if inputs.v_scale is not None else one,
        "query_length": case.q_len,
        "q_len": case.q_len,
        "max_context_len": case.context,
    }
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        raise Skip("cannot read pa_decode_tile's signature") from None
    kwargs, missing = {}, []
    for name, p in params.items():
        if name in known:
            kwargs[name] = known[name]
        elif p.default is inspect.Parameter.empty and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            missing.append(name)
    if missing:
        raise Skip(f"pa_decode_tile signature not recognised (no value for {', '.join(missing)})")

    def run():
        r = fn(**kwargs)
        if isinstance(r, torch.Tensor) and r.data_ptr() != out.data_ptr():
            out.copy_(r.reshape(out.shape))
        return out

    return Prepared(run=run, out=out, note="unverified adapter")
