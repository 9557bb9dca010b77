"""models/attention/prefill.py: aiter's varlen and batch-prefill attention on the step's chunk
statistics, worked by hand; the paged K/V layouts it reads heads and dims from; refusals."""

from __future__ import annotations

import pytest

from perfreport.errors import ModelError
from perfreport.models.attention.prefill import AiterFmhaV3VarlenFwd, AiterMhaBatchPrefill, AiterMhaVarlenFwd
from perfreport.stats.iteration_formats import parse_iteration
from tests.kit import cpu_op

BF16 = "c10::BFloat16"
# one prefill chunk of 16 new tokens on 8 cached (sk 24) + 3 decodes (sk 294 in all)
STEP = parse_iteration("execute_19_context_1(sq16sk24sqsq256sqsk384)_generation_3(sq3sk294sqsq3sqsk294)")


def _op(name, k, v, window="-1"):
    dims = [[19, 4, 64], k, v] + [[] for _ in range(12)]
    types = [BF16, BF16, BF16] + ["" for _ in range(12)]
    concrete = ["" for _ in range(15)]
    concrete[13] = window
    return cpu_op(name, dims, types, concrete, meta={"iteration": STEP})


def test_varlen_by_hand():
    m = AiterMhaVarlenFwd(_op("aiter::mha_varlen_fwd", [318, 1, 64], [318, 1, 64]))
    p = m.params()
    assert (p["H_Q"], p["H_KV"], p["d_h_qk"], p["d_h_v"]) == (4, 1, 64, 64)
    # H_Q (d_qk + d_v) (2 c_sqsk - c_sqsq + 2 g_sqsk) = 4 * 128 * (768 - 256 + 588)
    assert m.flops() == 563_200
    # ((c_sq + g_sq) H_Q (d_qk + d_v) + (c_sk + g_sk) H_KV (d_qk + d_v)) * 2 bytes = (19 * 512 + 318 * 128) * 2
    assert m.bytes() == 100_864
    assert AiterFmhaV3VarlenFwd(_op("aiter::fmha_v3_varlen_fwd", [318, 1, 64], [318, 1, 64])).flops() == 563_200


def test_batch_prefill_reads_every_kv_layout():
    page1 = AiterMhaBatchPrefill(_op("aiter::mha_batch_prefill", [318, 1, 64], [318, 1, 48]))
    assert (page1.H_KV, page1.d_h_v, page1.kv_layout) == (1, 48, "page 1")
    assert page1.flops() == 4 * (64 + 48) * 1100  # d_v from V: 48
    five = AiterMhaBatchPrefill(_op("aiter::mha_batch_prefill", [20, 1, 8, 16, 8], [20, 1, 2, 48, 8]))
    assert (five.H_KV, five.d_h_v, five.kv_layout) == (1, 48, "5D")
    nhd = AiterMhaBatchPrefill(_op("aiter::mha_batch_prefill", [20, 16, 1, 64], [20, 16, 1, 64]))
    assert (nhd.H_KV, nhd.d_h_v, nhd.flops()) == (1, 64, 563_200)
    with pytest.raises(ModelError, match="unexpected paged K/V shapes"):
        AiterMhaBatchPrefill(_op("aiter::mha_batch_prefill", [20, 16, 1, 64], [20, 1, 64]))


def test_a_left_window_caps_the_pairs():
    full = AiterMhaVarlenFwd(_op("aiter::mha_varlen_fwd", [318, 1, 64], [318, 1, 64]))
    win = AiterMhaVarlenFwd(_op("aiter::mha_varlen_fwd", [318, 1, 64], [318, 1, 64], window="7"))
    assert win.flops() < full.flops()
    assert win.assumptions()  # the window's lower bound is an assumption with bounds


def test_refusals():
    with pytest.raises(ModelError, match=r"expected query \[total_q, H_Q, D\]"):
        AiterMhaVarlenFwd(
            cpu_op(
                "aiter::mha_varlen_fwd", [[19, 256], [318, 1, 64], [318, 1, 64]], [BF16] * 3, meta={"iteration": STEP}
            )
        )
    with pytest.raises(ModelError, match=r"expected key/value \[total_k, H_KV, D\]"):
        AiterMhaVarlenFwd(_op("aiter::mha_varlen_fwd", [20, 16, 1, 64], [20, 16, 1, 64]))
