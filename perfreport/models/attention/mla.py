"""MLA decode (multi-head latent attention, DeepSeek-V2 arXiv 2405.04434 §2.1) in latent dims.

In the decode ("absorbed") form every query head attends over one shared latent vector per
cached token: K = [c_KV (kv_lora_rank), k_rope (qk_rope_head_dim)] (d_qk = 512 + 64 = 576 for
DeepSeek-V2/V3), V = c_KV (d_v = 512, the first d_v elements of the same vector). So

* FLOPs = 2*H_Q*(d_qk + d_v)*g_sqsk (Q*K^T over d_qk, P*V over d_v; decode keys only);
* bytes = new tokens (Q read H_Q*d_qk, O written H_Q*d_v, their latent H_KV*d_qk) at the query
  dtype + cached latents (g_sk - g_sq)*H_KV*d_qk at the cache dtype (``shared_kv_latent``:
  V is not read again).

Only the step's decode group is charged: these kernels run the decode requests (prefill
chunks go through the expanded MHA path, another op).

``aiter::mla_decode_stage1_asm_fwd(Q [tokens, H_Q, d_qk], KV [pages, page, H_KV, d_qk],
qo_indptr, kv_indptr, kv_page_indices, kv_last_page_lens, ...)`` (aiter
``csrc/include/mla.h``). d_v is not a size of Q or KV: it is read from the first other
argument shaped ``[tokens, H_Q, d_v]`` or ``[tokens, splits, H_Q, d_v]`` (the output / split
buffers, d_v < d_qk), else taken as d_qk - 64 (qk_rope_head_dim = 64 in every DeepSeek MLA
config) and marked ``d_h_v (assumed)`` in the row.
"""

from __future__ import annotations

from typing import Any

from perfreport.errors import ModelError
from perfreport.models.base import input_dims
from perfreport.models.attention.inference import InferenceAttention

ROPE_DIM = 64  # qk_rope_head_dim of DeepSeek-V2 / V3 / R1 configs


class AiterMlaDecode(InferenceAttention):
    """``aiter::mla_decode_stage1_asm_fwd`` (see the module doc)."""

    shared_kv_latent = True
    Q, KV = 0, 1

    def __init__(self, op):
        super().__init__(op)
        # decode group only: zero the prefill statistics this kernel does not run
        self.stats = self.stats.decode_only()

    def read_shapes(self) -> dict[str, Any]:
        q, kv = input_dims(self.op, self.Q), input_dims(self.op, self.KV)
        if len(q) != 3 or len(kv) not in (3, 4):
            raise ModelError(f"{self.op.name}: expected Q [tokens, H_Q, d_qk] and a latent KV cache")
        n, h, dqk = q
        if kv[-1] != dqk:
            raise ModelError(f"{self.op.name}: Q head dim {dqk} != latent cache dim {kv[-1]}")
        dv, assumed = None, False
        for i, d in enumerate(self.op.args.get("Input Dims") or []):
            if i in (self.Q, self.KV) or not isinstance(d, list):
                continue
            if len(d) == 3 and d[0] == n and d[1] == h and 0 < d[2] < dqk:
                dv = d[2]
                break
            if len(d) == 4 and d[0] == n and d[2] == h and 0 < d[3] < dqk:
                dv = d[3]
                break
        if dv is None:
            dv, assumed = dqk - ROPE_DIM, True
        self.d_v_assumed = assumed
        return dict(N_Q=n, H_Q=h, H_KV=kv[-2], d_h_qk=dqk, d_h_v=dv, kv_layout="latent")

    def read_dtypes(self) -> tuple[str, str]:
        return self.cache_dtypes(self.Q, self.KV, "KV")

    def params(self) -> dict[str, Any]:
        p = super().params()
        if self.d_v_assumed:
            p["d_h_v"] = f"{self.d_h_v} (assumed: d_qk - {ROPE_DIM} rope dims)"
        return p


class CutlassMlaDecode(AiterMlaDecode):
    """CUTLASS MLA decode, Q split in its no-rope (latent) and rope parts.

    * vLLM ``_C::cutlass_mla_decode(out, q_nope, q_pe, kv_c_and_k_pe_cache, seq_lens,
      page_table, scale)`` and SGLang ``sgl_kernel::cutlass_mla_decode(out, q_nope, q_pe,
      kv_c_and_k_pe_cache, seq_lens, page_table, workspace, sm_scale, num_kv_splits)``
      (vLLM ``csrc/torch_bindings.cpp``, sgl-kernel ``csrc/common_extension.cc``; older
      sgl-kernel: ``(out, q_nope_and_q_pe, kv_c_and_k_pe_cache, seq_lens, page_table,
      workspace)``, told apart by a 1-d argument 3, d_qk then from the joint Q);
    * vLLM ``_C::sm100_cutlass_mla_decode(out, lse, q_nope, q_pe, kv_c_and_k_pe_cache,
      seq_lens, page_table, workspace, scale, num_kv_splits)``.

    q_nope ``[B, H_Q, kv_lora_rank]``, q_pe ``[B, H_Q, rope]``, cache
    ``[pages, page, kv_lora_rank + rope]`` (one latent head), out ``[B, H_Q, kv_lora_rank]``:
    d_qk = q_nope + q_pe dims, d_v = out's last dim (no assumption), H_KV = 1; the same
    latent formulas as the aiter kernel (module doc), decode group only.
    """

    OUT, Q_NOPE, Q_PE, KV = 0, 1, 2, 3
    O_ARG = 0

    def read_shapes(self) -> dict[str, Any]:
        out, qn, qp, kv = (input_dims(self.op, i) for i in (self.OUT, self.Q_NOPE, self.Q_PE, self.KV))
        if len(kv) == 1 and len(qp) == 3 and len(qn) == 3 and qp[-1] == qn[-1]:
            # older sgl-kernel form (out, q_nope_and_q_pe, kv_c_and_k_pe_cache, seq_lens, ...)
            qn, qp, kv = [qn[0], qn[1], out[2]], [qn[0], qn[1], qn[2] - out[2]], qp
            self._kv_at = self.Q_PE
        else:
            self._kv_at = self.KV
        if len(qn) != 3 or len(qp) != 3 or len(out) != 3 or len(kv) not in (3, 4):
            raise ModelError(
                f"{self.op.name}: expected q_nope/q_pe/out [B, H_Q, d] and a latent cache [pages, page, d]"
            )
        dqk = qn[2] + qp[2]
        if kv[-1] != dqk or qn[:2] != qp[:2]:
            raise ModelError(f"{self.op.name}: q_nope {qn} + q_pe {qp} do not match the latent cache {kv}")
        self.d_v_assumed = False
        return dict(
            N_Q=qn[0], H_Q=qn[1], H_KV=1 if len(kv) == 3 else kv[2], d_h_qk=dqk, d_h_v=out[2], kv_layout="latent"
        )

    def read_dtypes(self) -> tuple[str, str]:
        return self.cache_dtypes(self.Q_NOPE, self._kv_at, "kv_c_and_k_pe_cache")


class Sm100CutlassMlaDecode(CutlassMlaDecode):
    """``_C::sm100_cutlass_mla_decode`` (lse buffer at 1; see :class:`CutlassMlaDecode`)."""

    OUT, Q_NOPE, Q_PE, KV = 0, 2, 3, 4


__all__ = ["AiterMlaDecode", "CutlassMlaDecode", "Sm100CutlassMlaDecode", "ROPE_DIM"]
