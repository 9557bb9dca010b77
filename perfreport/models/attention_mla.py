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
from perfreport.models.base import input_dims, input_type
from perfreport.models.inference_attention import InferenceAttention

ROPE_DIM = 64        # qk_rope_head_dim of DeepSeek-V2 / V3 / R1 configs


class AiterMlaDecode(InferenceAttention):
    """``aiter::mla_decode_stage1_asm_fwd`` (see the module doc)."""

    shared_kv_latent = True
    Q, KV = 0, 1

    def __init__(self, op):
        super().__init__(op)
        # decode group only: zero the prefill statistics this kernel does not run
        self.stats = dict(self.stats, c_sq=0, c_sk=0, c_sqsq=0, c_sqsk=0)

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
        return input_type(self.op, self.Q), input_type(self.op, self.KV)

    def params(self) -> dict[str, Any]:
        p = super().params()
        if self.d_v_assumed:
            p["d_h_v"] = f"{self.d_h_v} (assumed: d_qk - {ROPE_DIM} rope dims)"
        return p


__all__ = ["AiterMlaDecode", "ROPE_DIM"]
