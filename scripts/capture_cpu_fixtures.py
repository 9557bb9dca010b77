"""Capture small real CPU traces with torch.profiler for the tests.

    python scripts/capture_cpu_fixtures.py            # writes fixtures/cpu_*.json.gz

The traces have no GPU events (CPU-only machine): they exercise the reader, the tree,
record_shapes arguments and the CPU-side sheets. Deterministic shapes; timings vary.
"""

from __future__ import annotations

import gzip
import os
import shutil
import tempfile
from pathlib import Path

import torch
import torch.nn.functional as F

OUT = Path(__file__).resolve().parent.parent / "fixtures"


def _save(prof, name: str) -> Path:
    with tempfile.TemporaryDirectory() as d:
        raw = os.path.join(d, "trace.json")
        prof.export_chrome_trace(raw)
        dst = OUT / name
        with open(raw, "rb") as src, gzip.GzipFile(dst, "wb", compresslevel=9, mtime=0) as out:
            shutil.copyfileobj(src, out)
    return dst


def mlp_attention() -> Path:
    """A tiny transformer block: linear, SDPA (causal, GQA-free), layer norm, GELU, backward."""
    torch.manual_seed(0)
    B, S, H, D = 2, 64, 4, 32
    E = H * D
    x = torch.randn(B, S, E, requires_grad=True)
    wq = torch.nn.Linear(E, 3 * E)
    wo = torch.nn.Linear(E, E)
    ln = torch.nn.LayerNorm(E)
    acts = [torch.profiler.ProfilerActivity.CPU]
    with torch.profiler.profile(activities=acts, record_shapes=True) as prof:
        with torch.profiler.record_function("block_forward"):
            h = ln(x)
            q, k, v = wq(h).split(E, dim=-1)
            q = q.view(B, S, H, D).transpose(1, 2)
            k = k.view(B, S, H, D).transpose(1, 2)
            v = v.view(B, S, H, D).transpose(1, 2)
            o = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            o = o.transpose(1, 2).reshape(B, S, E)
            y = F.gelu(wo(o)) + x
            loss = y.float().pow(2).mean()
        with torch.profiler.record_function("block_backward"):
            loss.backward()
        a = torch.randn(64, 128, dtype=torch.bfloat16)
        b = torch.randn(128, 32, dtype=torch.bfloat16)
        torch.mm(a, b)
        torch.bmm(torch.randn(4, 16, 8), torch.randn(4, 8, 12))
    return _save(prof, "cpu_block.json.gz")


if __name__ == "__main__":
    print(mlp_attention())
