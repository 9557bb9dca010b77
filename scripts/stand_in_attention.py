"""The attention the attention stand-ins compute, and the decode step their fixtures share.

Used by scripts/capture_attention_fixtures.py and capture_flashinfer_flashmla_fixtures.py:
both run a decode step of 4 requests with KV lengths ``DECODE_KV`` inside the vLLM detailed
annotation ``DECODE`` (4 new tokens, Σ sk = 37 + 64 + 100 + 130 = 331, Σ sq·sk = 331).
"""

from __future__ import annotations

import torch

DECODE = "execute_4_context_0(sq0sk0sqsq0sqsk0)_generation_4(sq4sk331sqsq4sqsk331)"
DECODE_KV = [37, 64, 100, 130]


def attend(q, k, v, scale):
    """q [sq, Hq, Dk], k [n, Hkv, Dk], v [n, Hkv, Dv] -> [sq, Hq, Dv]; causal on the last sq keys."""
    g = q.shape[1] // k.shape[1]
    qf = q.float().transpose(0, 1)
    kf = k.float().repeat_interleave(g, 1).transpose(0, 1)
    vf = v.float().repeat_interleave(g, 1).transpose(0, 1)
    s = torch.matmul(qf, kf.transpose(1, 2)) * scale
    sq, n = q.shape[0], k.shape[0]
    mask = torch.arange(n)[None, :] > (n - sq + torch.arange(sq))[:, None]
    p = torch.softmax(s.masked_fill(mask, float("-inf")), -1)
    return torch.matmul(p, vf).transpose(0, 1)
