"""FlashInfer batch decode on paged KV caches, on the step's decode statistics.

FlashInfer's compiled variants reach the torch dispatcher (and so the profiler) in two
version ranges (github.com/flashinfer-ai/flashinfer; v0.2.0.post2 and v0.4+ record no op, see
:mod:`perfreport.models.attention.flashinfer_prefill`), with ``<uri>`` =
``batch_decode_with_kv_cache_dtype_q_<q>_dtype_kv_<kv>_dtype_o_<o>_dtype_idx_<i>_head_dim...``
(``jit/attention`` ``get_batch_decode_uri``):

* v0.2.1 – v0.3.x: ``<uri>::run`` (``csrc/batch_decode_jit_pybind.cu``
  ``TORCH_LIBRARY_FRAGMENT(TORCH_EXTENSION_NAME, m) { m.def("run", ...); }``), positional
  ``(float_workspace_buffer, int_workspace_buffer, plan_info_vec, q [B, H_Q, D], paged_k_cache,
  paged_v_cache, paged_kv_indptr, paged_kv_indices, paged_kv_last_page_len, o, maybe_lse,
  kv_layout_code, window_left, ...)`` (the same order as ``decode.py`` at HEAD);
* v0.2.0 / .post1: ``flashinfer::<uri>_run`` (``decode.py`` ``torch.library.custom_op``
  ``run_batch_decode``): ``(float_workspace_buffer, int_workspace_buffer, plan_info_vec, q,
  paged_k_cache, paged_v_cache, paged_kv_indptr, paged_kv_indices, paged_kv_last_page_len,
  alibi_slopes, kv_layout_code, window_left, logits_soft_cap, sm_scale, rope_scale,
  rope_theta, maybe_lse)``: layout and window one place earlier, no ``o``.

Caches NHD ``[pages, page, H_KV, D]`` (kv_layout_code 0) or HND ``[pages, H_KV, page, D]``
(1, ``TensorLayout`` in ``flashinfer/utils.py``).

The work is the :class:`~perfreport.models.attention.inference.InferenceAttention` formula
over the decode group of the step's iteration annotation (the decode wrapper runs the decode
requests; prefill goes through the prefill wrapper, another op): FLOPs =
2*H_Q*(d_qk + d_v)*g_sqsk; bytes = new tokens at the query dtype + (g_sk - g_sq)*H_KV*(d_qk +
d_v) cached elements at the cache dtype (FP8 = 1 byte). ``window_left`` >= 0 caps it as a
sliding window of window_left + 1 keys. The kernel dequantizes FP8 pages to the query dtype,
so the compute precision is the query's.
"""

from __future__ import annotations

from typing import Any

from perfreport.errors import ModelError
from perfreport.models.base import concrete_input, input_dims
from perfreport.models.attention.engine_ops import layout_heads
from perfreport.models.attention.inference import InferenceAttention
from perfreport.stats.chunks import window_group

BATCH_DECODE_RUN = r"batch_decode_with_kv_cache_\w+::run"
BATCH_DECODE_RUN_V020 = r"flashinfer::batch_decode_with_kv_cache_\w+_run"
LAYOUTS = {"0": "NHD", "1": "HND"}


class FlashInferBatchDecode(InferenceAttention):
    """``batch_decode_with_kv_cache_*::run`` (v0.2.1 – v0.3.x; see the module doc)."""

    Q, K, V, KV_INDPTR, LAYOUT = 3, 4, 5, 6, 11
    WINDOW = 12
    O_ARG = 9  # o (the v0.2.0 custom op returns it instead: O at the query dtype there)

    def __init__(self, op):
        super().__init__(op)
        # decode group only: zero the prefill statistics this kernel does not run
        self.stats = self.stats.decode_only()
        if self._groups is not None:  # recompute the prefill group's share on zeros
            self._groups = (window_group(0, 0, 0, 0, 0, self.window, decode=False), self._groups[1])

    def read_shapes(self) -> dict[str, Any]:
        q, k, v = (input_dims(self.op, i) for i in (self.Q, self.K, self.V))
        if len(q) != 3:
            raise ModelError(f"{self.op.name}: expected q [batch, H_Q, D] at argument {self.Q}")
        lay = LAYOUTS.get(str(concrete_input(self.op, self.LAYOUT)).strip(), "")
        out = layout_heads(self.op, k, v, lay, q[1])
        if out["d_h_qk"] != q[2]:
            raise ModelError(f"{self.op.name}: q head dim {q[2]} != cache head dim {out['d_h_qk']}")
        out.update(N_Q=q[0], H_Q=q[1])
        ind = input_dims(self.op, self.KV_INDPTR)
        if len(ind) == 1:
            out["B"] = max(ind[0] - 1, 0)
        return out

    def read_dtypes(self) -> tuple[str, str]:
        return self.cache_dtypes(self.Q, self.K, "paged_k_cache")


class FlashInferBatchDecodeV020(FlashInferBatchDecode):
    """``flashinfer::batch_decode_with_kv_cache_*_run`` (v0.2.0 custom op; module doc)."""

    LAYOUT, WINDOW, O_ARG = 10, 11, None


__all__ = ["FlashInferBatchDecode", "FlashInferBatchDecodeV020", "BATCH_DECODE_RUN", "BATCH_DECODE_RUN_V020"]
