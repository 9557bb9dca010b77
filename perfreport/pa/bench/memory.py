"""Memory a bench-pa case needs, estimated before anything is allocated, and what is available.

Peak of one case (cases run one after another; each frees its tensors before the next):

* inputs: K and V caches ``S * pages * page * H_KV * (Dk + Dv) * bpe_KV``, query
  ``S * q * H_Q * Dk * 2``, block table and lengths;
* the fp32 reference (also the ``torch`` backend): the gathered K and V in fp32, three copies
  alive at the peak (gather, dequantize/mask, the einsum operand) ``3 * S * pages * page * H_KV *
  (Dk + Dv) * 4``, and the scores/probabilities ``3 * S * H_Q * q * pages * page * 4``;
* per backend: its output ``S * q * H_Q * Dv * 2`` (two: ours and the check), our split-K
  workspace at the most partitions (``S * H_KV * 4096 * rows * (Dv + 2) * 4`` bounded by the plan:
  counted at 256 partitions), and one converted copy of the caches for the vendor backends
  (layout changes made once, outside the timing).

The estimate is compared with the free device memory (``torch.cuda.mem_get_info``) on a GPU, or
``MemAvailable`` of ``/proc/meminfo`` on the CPU.
"""

from __future__ import annotations

import os

from perfreport.pa.bench.case import PACase

WORKSPACE_PARTS = 256  # the planner's MAX_PARTS (an explicit --partitions N is used as is)


def case_bytes(case: PACase, backends: list[str], partitions="auto") -> int:
    """Estimated peak bytes of one case (formula in the module docstring)."""
    s, q, hq, hkv = case.batch, case.q_len, case.q_heads, case.kv_heads
    dk, dv = case.head_dim, case.v_head_dim
    tokens = case.pages_per_seq * case.page
    bpe = 2 if case.kv_dtype == "bf16" else 1
    caches = s * tokens * hkv * (dk + dv) * bpe
    query = s * q * hq * dk * 2
    small = s * (case.pages_per_seq + 1) * 4
    ref = 3 * s * tokens * hkv * (dk + dv) * 4 + 3 * s * hq * q * tokens * 4
    outs = 2 * len(backends) * s * q * hq * dv * 2
    parts = WORKSPACE_PARTS if partitions == "auto" else int(partitions)
    ws = s * hkv * parts * q * (hq // hkv) * (dv + 2) * 4 if "triton" in backends else 0
    vendor = caches if any(b not in ("triton", "torch") for b in backends) else 0
    return caches + query + small + ref + outs + ws + vendor


def available_bytes(on_gpu: bool) -> tuple[int | None, str]:
    """(bytes available, what it is) on the device, or on the host without a GPU."""
    if on_gpu:
        import torch

        free, _total = torch.cuda.mem_get_info()
        return int(free), "free on the GPU"
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024, "available host RAM"
    except OSError:
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"), "available host RAM"
    except (ValueError, OSError):
        return None, "unknown"


def gib(n: int) -> str:
    return f"{n / 2**30:,.1f} GiB"


__all__ = ["available_bytes", "case_bytes", "gib"]
