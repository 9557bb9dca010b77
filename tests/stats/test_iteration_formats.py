"""Iteration-annotation formats: one registry, statistics per format."""

from __future__ import annotations

import re

import pytest

from perfreport.stats import iteration_formats as itf
from perfreport.stats.iteration_formats import STAT_KEYS, is_complete, parse_iteration

# The annotation in ../shared/traces/inference/vllm_decode_full/graph_execution.json.gz
VLLM_DECODE = "execute_32_context_0(sq0sk0sqsq0sqsk0)_generation_32(sq32sk55086sqsq32sqsk55086)"


def test_vllm_detailed_decode_from_shared_trace():
    s = parse_iteration(VLLM_DECODE)
    assert s["format"] == "vLLM detailed"
    assert s["annotation"] == VLLM_DECODE
    assert "missing" not in s and is_complete(s)
    assert [s[k] for k in STAT_KEYS] == [0, 0, 0, 0, 32, 55086, 32, 55086]
    assert (s["c_reqs"], s["g_reqs"]) == (0, 32)


def test_vllm_detailed_mixed_step():
    # 1 prefill chunk of 16 new tokens on 8 cached (sk 24: sqsq 256, sqsk 16*24 = 384)
    # + 3 decodes with KV 64, 100, 130 (sk 294, sqsk 294)
    s = parse_iteration("execute_19_context_1(sq16sk24sqsq256sqsk384)_generation_3(sq3sk294sqsq3sqsk294)")
    assert [s[k] for k in STAT_KEYS] == [16, 24, 256, 384, 3, 294, 3, 294]
    assert (s["c_reqs"], s["g_reqs"]) == (1, 3)


def test_vllm_native_has_no_sk():
    s = parse_iteration("execute_context_2(300)_generation_30(30)")
    assert s["format"] == "vLLM native"
    assert (s["c_reqs"], s["c_sq"], s["g_reqs"], s["g_sq"]) == (2, 300, 30, 30)
    assert s["c_sk"] is None and s["g_sqsk"] is None
    assert s["missing"] == "annotation has no sk (vLLM native format)"
    assert not is_complete(s)


def test_sglang_decode_step_derives_sq_only():
    # the form in ../shared/traces/inference/sglang_decode (nested inside an execute_ one)
    s = parse_iteration("step[DECODE bs=32]")
    assert s["format"] == "SGLang step"
    assert (s["g_reqs"], s["g_sq"], s["g_sqsq"]) == (32, 32, 32)
    assert (s["c_sq"], s["c_sk"], s["c_sqsq"], s["c_sqsk"]) == (0, 0, 0, 0)
    assert s["g_sk"] is None and s["g_sqsk"] is None
    assert "no sk" in s["missing"]


def test_sglang_extend_step():
    s = parse_iteration("step[EXTEND bs=15 toks=15360]")
    assert (s["c_reqs"], s["c_sq"]) == (15, 15360)
    assert s["g_sq"] == 0 and s["g_sk"] == 0
    assert s["c_sk"] is None and s["c_sqsq"] is None
    assert not is_complete(s)


def test_sglang_unknown_mode_matches_without_stats():
    s = parse_iteration("step[IDLE]")
    assert s is not None and all(s[k] is None for k in STAT_KEYS)
    assert "IDLE" in s["missing"]


@pytest.mark.parametrize(
    "name",
    [
        "",
        "execute_model",
        "aten::mm",
        "step[DECODE bs=x]",
        "execute_32_context_0(sq0sk0)_generation_32(sq32sk5)",
        VLLM_DECODE + "_tail",
    ],
)
def test_other_names_are_not_iterations(name):
    assert parse_iteration(name) is None


def test_new_format_is_one_registration():
    saved = list(itf.FORMATS)
    try:

        @itf.register_format("toy engine", r"iter bs=(\d+) kv=(\d+)")
        def _toy(m: re.Match) -> dict:
            bs, kv = int(m.group(1)), int(m.group(2))
            return {
                "c_sq": 0,
                "c_sk": 0,
                "c_sqsq": 0,
                "c_sqsk": 0,
                "g_sq": bs,
                "g_sk": kv,
                "g_sqsq": bs,
                "g_sqsk": kv,
                "g_reqs": bs,
            }

        s = parse_iteration("iter bs=8 kv=4096")
        assert s["format"] == "toy engine" and is_complete(s)
        assert (s["g_sq"], s["g_sk"], s["g_sqsk"]) == (8, 4096, 4096)
    finally:
        itf.FORMATS[:] = saved
        parse_iteration.cache_clear()
    assert parse_iteration("iter bs=8 kv=4096") is None


def test_missing_reason_defaults_to_unknown_keys():
    saved = list(itf.FORMATS)
    try:
        itf.register_format("half", r"half(\d+)")(lambda m: {"g_sq": int(m.group(1))})
        s = parse_iteration("half7")
        assert s["g_sq"] == 7
        assert s["missing"].startswith("annotation has no c_sq") and "(half format)" in s["missing"]
    finally:
        itf.FORMATS[:] = saved
        parse_iteration.cache_clear()


# -- compact form: execute_context_<R>(<tokens>_<kv>)_generation_<R>(<tokens>_<kv>) ----------
def test_compact_decode_is_exact():
    # 32 decode requests, one new token each: sqsq = 32, sqsk = sk
    s = parse_iteration("execute_context_0(0_0)_generation_32(32_55086)")
    assert s["format"] == "vLLM compact" and is_complete(s)
    assert [s[k] for k in STAT_KEYS] == [0, 0, 0, 0, 32, 55086, 32, 55086]
    assert (s["c_reqs"], s["g_reqs"]) == (0, 32) and "estimated" not in s


def test_compact_single_prefill_is_exact_and_leading_token_count_is_accepted():
    # one prefill chunk of 16 new tokens on 8 cached: sqsq 16^2 = 256, sqsk 16*24 = 384
    s = parse_iteration("execute_19_context_1(16_24)_generation_3(3_294)")
    assert [s[k] for k in STAT_KEYS] == [16, 24, 256, 384, 3, 294, 3, 294]
    assert "estimated" not in s


def test_compact_several_prefills_are_estimated_with_bounds():
    # 2 prefill requests, 300 new tokens, 500 KV tokens: equal split 150/250 ->
    # sqsq = 300^2/2 = 45000, sqsk = 300*500/2 = 75000; bounds sqsq [45000, 299^2 + 1],
    # sqsk [45000, 300*500]
    s = parse_iteration("execute_context_2(300_500)_generation_0(0_0)")
    assert is_complete(s) and s["format"] == "vLLM compact"
    assert (s["c_sqsq"], s["c_sqsk"]) == (45000, 75000)
    assert s["estimated"] == {"c_sqsq": (45000, 299**2 + 1), "c_sqsk": (45000, 150000)}


def test_mixed_group_syntaxes():
    s = parse_iteration("execute_context_0(0)_generation_4(sq4sk331sqsq4sqsk331)")
    assert s["format"] == "vLLM native" and is_complete(s)  # the empty native group is known
    assert [s[k] for k in STAT_KEYS] == [0, 0, 0, 0, 4, 331, 4, 331]
    s = parse_iteration("execute_context_1(16_24)_generation_3(sq3sk294sqsq3sqsk294)")
    assert s["format"] == "vLLM compact" and is_complete(s)


def test_detailed_without_leading_token_count():
    s = parse_iteration("execute_context_0(sq0sk0sqsq0sqsk0)_generation_32(sq32sk55086sqsq32sqsk55086)")
    assert s["format"] == "vLLM detailed" and s["g_sk"] == 55086
