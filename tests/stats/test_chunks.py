"""Sliding-window key and pair counts from chunk sums (perfreport.stats.chunks)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

import pytest

from perfreport.errors import ModelError
from perfreport.stats.chunks import ChunkStats, GroupStats, chunk_stats, window_group
from perfreport.stats.iteration_formats import STAT_KEYS, parse_iteration
from perfreport.stats.iteration_registry import group_from_sums


def test_decode_group_of_the_vllm_trace_under_a_128_window():
    # 32 decode requests, 55,086 KV tokens, W = 128 (gpt-oss sliding layers)
    g = window_group(32, 55086, 32, 55086, 32, 128, decode=True)
    assert g.keys == 4096  # min(55086, 32 + 32*127)
    assert g.pairs == 4096  # min(55086, 32*128): one query per request
    assert g.keys_lo == 159  # 32 + min(55086 - 32, 127): one long request, 31 of length 1
    assert g.pairs_lo == 159
    assert (g.full_keys, g.full_pairs) == (55086, 55086)


def test_prefill_group_by_hand():
    # two requests of 50 new tokens on 100 cached (sk 150 each), W = 16
    # sq 100, sk 300, sqsq 2*50^2 = 5000, sqsk 2*50*150 = 15000
    g = window_group(100, 300, 5000, 15000, 2, 16, decode=False)
    assert g.full_pairs == 15000 - 2500
    assert g.pairs == 1600  # min(12500, 100*16)
    assert g.keys == 130  # min(300, 100 + 2*15)
    assert g.keys_lo == 115  # 100 + min(200, 15)
    # 2*f(50), f(50) = 16*17/2 + (50-16)*16 = 136 + 544
    assert g.pairs_lo == 2 * (136 + 544)


def test_empty_group_and_no_window_effect():
    assert window_group(0, 0, 0, 0, 0, 128, decode=True).keys == 0
    short = window_group(4, 40, 4, 40, 4, 128, decode=True)  # contexts shorter than W
    assert short.keys == 40 and short.pairs == 40


def _exact(q_lens, kv_lens, w):
    keys = pairs = 0
    for sq, sk in zip(q_lens, kv_lens):
        keys += min(sk, sq + w - 1)
        pairs += sum(min(p + 1, w) for p in range(sk - sq, sk))
    return keys, pairs


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.tuples(st.integers(1, 40), st.integers(0, 300)), min_size=1, max_size=6),
    st.integers(1, 64),
    st.booleans(),
)
def test_exact_per_request_values_lie_within_the_bounds(reqs, w, decode):
    q_lens = [1 if decode else q for q, _ in reqs]
    kv_lens = [q + c for q, (_, c) in zip(q_lens, reqs)]
    sq, sk = sum(q_lens), sum(kv_lens)
    sqsq = sum(q * q for q in q_lens)
    sqsk = sum(q * k for q, k in zip(q_lens, kv_lens))
    g = window_group(sq, sk, sqsq, sqsk, len(reqs), w, decode=decode)
    keys, pairs = _exact(q_lens, kv_lens, w)
    assert g.keys_lo <= keys <= g.keys
    # the prefill point caps the continuous full count sqsk - sqsq/2 (the model's causal
    # convention, half a pair per query under the exact discrete count)
    slack = 0 if decode else sq / 2
    assert g.pairs_lo <= pairs <= g.pairs + slack


# -- the typed record models read -------------------------------------------------------
class _Op:
    def __init__(self, it):
        self.name, self.perf_meta = "op", {"iteration": it}


def test_chunk_stats_is_a_typed_record_of_both_groups():
    # 1 prefill chunk of 16 new tokens on 8 cached (sk 24, sqsq 256, sqsk 384) + 3 decodes (sk 294)
    name = "execute_19_context_1(sq16sk24sqsq256sqsk384)_generation_3(sq3sk294sqsq3sqsk294)"
    s = chunk_stats(_Op(parse_iteration(name)))
    assert s == ChunkStats(GroupStats(16, 24, 256, 384, 1), GroupStats(3, 294, 3, 294, 3), name)
    assert list(s.by_key()) == list(STAT_KEYS)
    assert list(s.by_key().values()) == [16, 24, 256, 384, 3, 294, 3, 294]
    d = s.decode_only()
    assert (d.prefill.sq, d.prefill.sk, d.prefill.sqsq, d.prefill.sqsk, d.prefill.reqs) == (0, 0, 0, 0, 1)
    assert d.decode == s.decode and s.prefill.sq == 16  # the original is unchanged


def test_estimated_statistics_stay_with_their_group():
    # 2 prefill requests, 300 new tokens, 500 KV tokens: sqsq 300^2/2 = 45000 in [45000, 299^2 + 1],
    # sqsk 300*500/2 = 75000 in [45000, 150000]
    # per-batch sums only (as FlashInfer's prefill sees them; no annotation form gives these)
    it = {**group_from_sums("g", 0, 0, 0), **group_from_sums("c", 2, 300, 500), "c_reqs": 2, "g_reqs": 0}
    s = chunk_stats(_Op(it))
    assert s.prefill.estimated == {"sqsq": (45000, 299**2 + 1), "sqsk": (45000, 150000)}
    assert s.decode.estimated == {}
    assert s.estimated == {"c_sqsq": (45000, 299**2 + 1), "c_sqsk": (45000, 150000)}
    assert s.decode_only().prefill.estimated == s.prefill.estimated


def test_chunk_stats_refuses_without_statistics():

    with pytest.raises(ModelError, match="no iteration annotation"):
        chunk_stats(_Op({}))
    with pytest.raises(ModelError, match="malformed"):
        chunk_stats(_Op({"c_sq": "x"}))
