"""pa/bench/memory.py: a case's peak bytes, estimated before allocation, worked by hand."""

from __future__ import annotations

from perfreport.pa.bench.case import PACase
from perfreport.pa.bench.memory import WORKSPACE_PARTS, available_bytes, case_bytes, gib

# 2 sequences of 1,000 tokens in 16 pages of 64 (1,024 slots), 16 query heads over 2 KV heads,
# Dk 128, Dv 64, q_len 4, bf16
CASE = PACase(context=1000, batch=2, q_len=4, q_heads=16, kv_heads=2, head_dim=128, v_head_dim=64, page=64)
CACHES = 2 * 1024 * 2 * (128 + 64) * 2  # 1,572,864
QUERY = 2 * 4 * 16 * 128 * 2  # 32,768
SMALL = 2 * (16 + 1) * 4  # block table and lengths: 136
REF = 3 * 2 * 1024 * 2 * (128 + 64) * 4 + 3 * 2 * 16 * 4 * 1024 * 4  # 9,437,184 + 1,572,864
OUT = 2 * (2 * 4 * 16 * 64 * 2)  # per backend: two outputs (its own and the check) of 16,384 B


def test_torch_only():
    assert case_bytes(CASE, ["torch"]) == CACHES + QUERY + SMALL + REF + 1 * OUT


def test_triton_adds_its_split_k_workspace():
    ws = 2 * 2 * WORKSPACE_PARTS * 4 * (16 // 2) * (64 + 2) * 4
    assert case_bytes(CASE, ["torch", "triton"]) == CACHES + QUERY + SMALL + REF + 2 * OUT + ws
    ws8 = 2 * 2 * 8 * 4 * 8 * 66 * 4
    assert case_bytes(CASE, ["triton"], partitions=8) == CACHES + QUERY + SMALL + REF + OUT + ws8


def test_a_vendor_backend_adds_one_converted_cache_copy_and_fp8_halves_the_cache():
    assert case_bytes(CASE, ["vllm"]) == CACHES + QUERY + SMALL + REF + OUT + CACHES
    fp8 = PACase(
        context=1000, batch=2, q_len=4, q_heads=16, kv_heads=2, head_dim=128, v_head_dim=64, page=64, kv_dtype="fp8"
    )
    assert case_bytes(fp8, ["torch"]) == CACHES // 2 + QUERY + SMALL + REF + OUT


def test_available_bytes_on_the_host_and_gib():
    n, what = available_bytes(False)
    assert what == "available host RAM" and n > 0
    assert gib(3 * 2**30 // 2) == "1.5 GiB"
