"""stats/iteration_registry.py: one registered format per annotation form; numbers read only from
forms with a source; implausible counts and near misses refused; group statistics from sums."""

from __future__ import annotations

import pytest

import perfreport.stats.iteration_registry as reg
from perfreport.stats.iteration_registry import STAT_KEYS, Source, group_from_sums, is_complete, parse_iteration

SRC = Source("example/engine", "engine/step.py", "Runner.step", "v1.0")


@pytest.fixture
def formats(monkeypatch):
    """A private format list for the test (the real one is restored and the cache cleared after)."""
    monkeypatch.setattr(reg, "FORMATS", [])
    parse_iteration.cache_clear()
    yield reg.register_format
    monkeypatch.undo()
    parse_iteration.cache_clear()


def test_a_sourced_form_is_read(formats):
    @formats("test step", r"tstep_(\d+)_(\d+)", SRC)
    def _conv(m):
        sq, sk = int(m.group(1)), int(m.group(2))
        return {
            "c_sq": 0,
            "c_sk": 0,
            "c_sqsq": 0,
            "c_sqsk": 0,
            "g_sq": sq,
            "g_sk": sk,
            "g_sqsq": sq,
            "g_sqsk": sk,
            "g_reqs": sq,
        }

    s = parse_iteration("tstep_4_100")
    assert [s[k] for k in STAT_KEYS] == [0, 0, 0, 0, 4, 100, 4, 100]
    assert (s["g_reqs"], s["c_reqs"], s["format"], s["annotation"]) == (4, None, "test step", "tstep_4_100")
    assert s["source"] == "example/engine engine/step.py Runner.step (v1.0)"
    assert is_complete(s)
    assert parse_iteration("tstep_4") is None  # full match only
    assert parse_iteration(f"tstep_{10**16}_1") is None  # beyond 10**15 tokens: not a real step


def test_missing_statistics_are_named(formats):
    formats("half", r"half_(\d+)", SRC)(lambda m: {"g_sq": int(m.group(1))})
    s = parse_iteration("half_3")
    assert s["g_sq"] == 3 and s["c_sq"] is None
    assert s["missing"] == "annotation has no c_sq, c_sk, c_sqsq, c_sqsk, g_sk, g_sqsq, g_sqsk (half format)"
    assert not is_complete(s) and not is_complete(None)


def test_a_form_without_a_source_is_recognised_but_never_read(formats):
    formats("mystery", r"mys_(\d+)", None)(lambda m: {"g_sq": int(m.group(1))})
    s = parse_iteration("mys_9")
    assert all(s[k] is None for k in STAT_KEYS) and s["source"] is None
    assert s["missing"] == "mystery: no code is known to write this form"


def test_a_converter_may_refuse_a_near_miss(formats):
    formats("picky", r"p_(\d+)", SRC)(lambda m: None if m.group(1) == "0" else {k: 1 for k in STAT_KEYS})
    formats("fallback", r"p_\d+", SRC)(lambda m: {k: 2 for k in STAT_KEYS})
    assert parse_iteration("p_1")["format"] == "picky"
    assert parse_iteration("p_0")["format"] == "fallback"


@pytest.mark.parametrize(
    ("reqs", "sq", "sk", "sqsq", "sqsk", "estimated"),
    [
        (0, 0, 0, 0, 0, None),
        (1, 5, 20, 25, 100, None),  # one request: exact
        (4, 4, 40, 4, 40, None),  # decode, one token each: exact
        # 2 requests, 10 tokens, 30 KV: equal requests 50 / 150; bounds sqsq [50, (10-2+1)^2 + 1 = 82], sqsk [50, 300]
        (2, 10, 30, 50, 150, {"c_sqsq": (50, 82), "c_sqsk": (50, 300)}),
    ],
)
def test_group_from_sums(reqs, sq, sk, sqsq, sqsk, estimated):
    g = group_from_sums("c", reqs, sq, sk)
    assert (g["c_sq"], g["c_sk"], g["c_sqsq"], g["c_sqsk"]) == (sq, sk, sqsq, sqsk)
    assert g.get("estimated") == estimated
