"""FlashInfer batch prefill op names: which versions record which, and the variant a name encodes.

Recorded names (torch.profiler records an op only where FlashInfer goes through the torch
dispatcher; sources: github.com/flashinfer-ai/flashinfer at the tags named):

* v0.2.1 – v0.3.x: the JIT/AOT module of each compiled variant is a torch extension named by
  its URI (``jit/core.py``: ``torch_cpp_ext.load(name)`` / ``torch.ops.load_library`` then
  ``getattr(torch.ops, name)``; ``csrc/batch_prefill_jit_pybind.cu`` and
  ``batch_prefill_sm90_jit_pybind.cu``: ``TORCH_LIBRARY_FRAGMENT(TORCH_EXTENSION_NAME, m)
  { m.def("ragged_run", ...); m.def("paged_run", ...); }``), so the ops are
  ``<uri>::ragged_run`` and ``<uri>::paged_run``; the prebuilt wheels of v0.2.1 – v0.2.6 use
  ``flashinfer_kernels::batch_prefill_with_{ragged,paged}_kv_cache_run`` (and
  ``flashinfer_kernels_sm90::..._sm90_run``, ``prefill.py`` ``get_batch_prefill_module``),
  the same C++ functions;
* v0.2.0 / v0.2.0.post1: ``flashinfer::<uri>_ragged_run`` / ``flashinfer::<uri>_paged_run``,
  ``torch.library.custom_op`` from ``prefill.py`` (``register_custom_op``), Python argument
  order in :mod:`perfreport.models.attention.flashinfer_prefill` (mask_mode first);
* v0.2.0.post2 (pybind11 module) and v0.4+ (TVM-FFI, ``csrc/batch_prefill_jit_binding.cu``
  ``TVM_FFI_DLL_EXPORT_TYPED_FUNC``; ``utils.register_custom_op`` returns the function
  unchanged since #709): no torch op, nothing recorded to model.

``<uri>`` (``jit/attention`` ``get_batch_prefill_uri``) =
``batch_prefill_with_kv_cache_dtype_q_<q>_dtype_kv_<kv>_dtype_o_<o>_dtype_idx_<i>_head_dim_qk_
<dqk>_head_dim_vo_<dvo>_posenc_<p>_use_swa_<b>_use_logits_cap_<b>_f16qk_<b>[_sm90]`` (v0.2.0:
``head_dim_<d>``); dtypes ``f16 bf16 e4m3 e5m2 u8 i32 ...`` (``jit/utils.py``
``filename_safe_dtype_map``), ``_sm90`` = the FA3 backend. :func:`parse_uri` reads it; the
model takes dtypes and dims from the tensors and refuses a name whose head dims disagree.
"""

from __future__ import annotations

import re
from typing import Any

RAGGED_RUN = r"batch_prefill_with_kv_cache_\w+::ragged_run"
PAGED_RUN = r"batch_prefill_with_kv_cache_\w+::paged_run"
RAGGED_RUN_V020 = r"flashinfer::batch_prefill_with_kv_cache_\w+_ragged_run"
PAGED_RUN_V020 = r"flashinfer::batch_prefill_with_kv_cache_\w+_paged_run"
RAGGED_RUN_AOT = r"flashinfer_kernels(_sm90)?::batch_prefill_with_ragged_kv_cache(_sm90)?_run"
PAGED_RUN_AOT = r"flashinfer_kernels(_sm90)?::batch_prefill_with_paged_kv_cache(_sm90)?_run"
_URI = (  # compiled on the first FlashInfer prefill op (re caches it): 1-4 ms a run saves otherwise
    r"batch_prefill_with_kv_cache_dtype_q_(?P<q>[a-z0-9]+)_dtype_kv_(?P<kv>[a-z0-9]+)"
    r"_dtype_o_(?P<o>[a-z0-9]+)_dtype_idx_(?P<idx>[a-z0-9]+)_head_dim_"
    r"(?:qk_(?P<dqk>\d+)_head_dim_vo_(?P<dvo>\d+)|(?P<d>\d+))_posenc_(?P<posenc>\d+)"
    r"_use_swa_(?P<swa>True|False)_use_logits_cap_(?P<cap>True|False)"
    r"_f16qk_(?P<f16qk>True|False)(?P<sm90>_sm90)?"
)


def parse_uri(name: str) -> dict[str, Any] | None:
    """The variant a FlashInfer prefill op name encodes, or None (AOT names carry none)."""
    m = re.search(_URI, name)
    if not m:
        return None
    g = m.groupdict()
    dqk = int(g["dqk"] or g["d"])
    return dict(
        dtype_q=g["q"],
        dtype_kv=g["kv"],
        dtype_o=g["o"],
        dtype_idx=g["idx"],
        head_dim_qk=dqk,
        head_dim_vo=int(g["dvo"] or g["d"]),
        posenc=int(g["posenc"]),
        use_swa=g["swa"] == "True",
        backend="fa3" if g["sm90"] else "fa2",
    )


__all__ = [
    "parse_uri",
    "RAGGED_RUN",
    "PAGED_RUN",
    "RAGGED_RUN_V020",
    "PAGED_RUN_V020",
    "RAGGED_RUN_AOT",
    "PAGED_RUN_AOT",
]
