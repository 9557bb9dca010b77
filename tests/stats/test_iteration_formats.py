"""Iteration-annotation formats: one registry, statistics per format."""

from __future__ import annotations

import re
from pathlib import Path

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
        VLLM_DECODE + "_tail",
    ],
)
def test_other_names_are_not_iterations(name):
    assert parse_iteration(name) is None


def test_new_format_is_one_registration_with_its_source():
    saved = list(itf.FORMATS)
    src = itf.Source("toy/engine", "engine/step.py", "Engine.annotate", "abc123")
    try:

        @itf.register_format("toy engine", r"iter bs=(\d+) kv=(\d+)", src)
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
        assert s["source"] == "toy/engine engine/step.py Engine.annotate (abc123)"
    finally:
        itf.FORMATS[:] = saved
        parse_iteration.cache_clear()
    assert parse_iteration("iter bs=8 kv=4096") is None


def test_a_form_without_a_source_is_recognised_but_never_read():
    saved = list(itf.FORMATS)
    try:
        itf.register_format("guess", r"guess(\d+)", None)(lambda m: {"g_sq": int(m.group(1))})
        s = parse_iteration("guess7")
        assert all(s[k] is None for k in STAT_KEYS) and s["source"] is None
        assert s["missing"] == "guess: no code is known to write this form"
    finally:
        itf.FORMATS[:] = saved
        parse_iteration.cache_clear()


def test_missing_reason_defaults_to_unknown_keys():
    saved = list(itf.FORMATS)
    try:
        itf.register_format("half", r"half(\d+)", itf.Source("r", "f", "fn", "c"))(lambda m: {"g_sq": int(m.group(1))})
        s = parse_iteration("half7")
        assert s["g_sq"] == 7
        assert s["missing"].startswith("annotation has no c_sq") and "(half format)" in s["missing"]
    finally:
        itf.FORMATS[:] = saved
        parse_iteration.cache_clear()


# -- forms no code is known to write: recognised, numbers never read (issue 19) ----------------
@pytest.mark.parametrize(
    "name",
    [
        "execute_context_0(0_0)_generation_32(32_55086)",  # the "(<tokens>_<kv>)" compact form
        "execute_19_context_1(16_24)_generation_3(3_294)",
        "execute_context_0(0)_generation_4(sq4sk331sqsq4sqsk331)",  # native and detailed mixed
        "execute_context_0(sq0sk0sqsq0sqsk0)_generation_32(sq32sk55086sqsq32sqsk55086)",  # detailed, no <T>
        "execute_32_context_0(sq0sk0)_generation_32(sq32sk5)",
    ],
)
def test_uncited_vllm_like_forms_are_unknown(name):
    s = parse_iteration(name)
    assert s["format"] == "vLLM-like (no known writer)" and s["source"] is None
    assert all(s[k] is None for k in STAT_KEYS) and (s["c_reqs"], s["g_reqs"]) == (None, None)
    assert "written by no known code" in s["missing"] and not is_complete(s)


def test_the_issue_19_compact_annotation_names_the_arithmetic():
    # 788,544 = 888^2: with one context request that is sum(sq*sk) (= sum sq^2) of a fresh
    # 888-token prefill (sk = sq = 888), not a KV length; still not read (no writer).
    s = parse_iteration("execute_context_1(888_788544)_generation_0(0)")
    assert s["c_sk"] is None and s["c_sq"] is None
    assert s["missing"].endswith("(788544 = 888^2 fits sum(sq*sk) of one 888-token prefill, not a KV length)")
    assert "^2" not in parse_iteration("execute_context_2(888_788544)_generation_0(0)")["missing"]


# -- every form names its writer ------------------------------------------------------------
def test_every_cited_form_is_documented_with_its_source():
    doc = (Path(__file__).resolve().parents[2] / "docs" / "annotations.md").read_text()
    cited = [f for f in itf.FORMATS if f.source is not None]
    assert {f.name for f in cited} >= {"vLLM detailed", "vLLM native", "vLLM new/cached", "SGLang step"}
    for f in itf.FORMATS:
        assert f"`{f.name}`" in doc, f.name
        if f.source:
            commit = re.match(r"PR #\d+|[0-9a-f]{40}", f.source.commit).group(0)
            for part in (f.source.repository, f.source.file.split(" ")[0], f.source.function.split(" ")[0], commit):
                assert part in doc, (f.name, part)


def test_vllm_new_cached_form_has_counts_only():
    # vllm-project/vllm gpu_worker.py Worker.annotate_profile @35d5cda: f"execute_new_{num_new}_cached_{num_cached}"
    s = parse_iteration("execute_new_3_cached_29")
    assert s["format"] == "vLLM new/cached" and all(s[k] is None for k in STAT_KEYS)
    assert "only new/cached request counts" in s["missing"]


# -- SGLang roofline annotations (sgl-project/sglang PR #24911, build_roofline_suffix) --------
def test_sglang_roofline_decode_without_g_sq():
    # the writer's own example: two decodes with seq_lens 10 and 20 -> nq = 1 each:
    # sk = 30, sqsq = 1 + 1 = 2, sqsk = 10 + 20 = 30; g_sq = bs = 2 (nq = 1 per request)
    s = parse_iteration("step[DECODE bs=2 g_sqsq=2 g_sqsk=30 g_sk=30]")
    assert is_complete(s) and [s[k] for k in STAT_KEYS] == [0, 0, 0, 0, 2, 30, 2, 30]
    assert (s["c_reqs"], s["g_reqs"]) == (0, 2)


def test_sglang_roofline_decode_with_g_sq_mtp():
    # MTP: 64 requests verify 2 tokens each: g_sq 128 > bs, sqsq 64*4 = 256
    s = parse_iteration("step[DECODE bs=64 g_sq=128 g_sqsq=256 g_sqsk=262144 g_sk=131072]")
    assert [s[k] for k in STAT_KEYS[4:]] == [128, 131072, 256, 262144] and is_complete(s)


def test_sglang_roofline_extend():
    # req a: nq 8 on prefix 2 (nkv 10): sqsq 64, sqsk 80; req b: nq 4 on prefix 6 (nkv 10):
    # sqsq 16, sqsk 40 -> sk 20, sqsq 80, sqsk 120, c_sq = toks = 12
    for name in (
        "step[EXTEND bs=2 toks=12 c_sqsq=80 c_sqsk=120 c_sk=20]",
        "step[EXTEND bs=2 toks=12 c_sq=12 c_sqsq=80 c_sqsk=120 c_sk=20]",
    ):
        s = parse_iteration(name)
        assert is_complete(s) and [s[k] for k in STAT_KEYS] == [12, 20, 80, 120, 0, 0, 0, 0]
        assert (s["c_reqs"], s["g_reqs"]) == (2, 0)
    assert (
        "c_sq 13 != toks 12"
        in parse_iteration("step[EXTEND bs=2 toks=12 c_sq=13 c_sqsq=80 c_sqsk=120 c_sk=20]")["missing"]
    )


def test_sglang_roofline_mixed():
    # ctx: nq 5 on prefix 3 (nkv 8): sqsq 25, sqsk 40; gen: nq 1 on prefix 11 (nkv 12)
    s = parse_iteration("step[MIXED bs=2 c=1 g=1 c_sq=5 c_sk=8 c_sqsq=25 c_sqsk=40 g_sq=1 g_sk=12 g_sqsq=1 g_sqsk=12]")
    assert is_complete(s) and [s[k] for k in STAT_KEYS] == [5, 8, 25, 40, 1, 12, 1, 12]
    assert (s["c_reqs"], s["g_reqs"]) == (1, 1)
    assert "no chunk statistics" in parse_iteration("step[MIXED bs=2]")["missing"]


def test_sglang_field_no_writer_emits_is_unknown():
    s = parse_iteration("step[DECODE bs=4 g_sk=40 kv_hint=3]")
    assert all(s[k] is None for k in STAT_KEYS) and "kv_hint" in s["missing"]
