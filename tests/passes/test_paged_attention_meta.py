"""Passes: iteration annotations (sweep) and the two paged-attention perf_meta passes."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from perfreport.models.registry import model_for
from perfreport.passes.iteration_annotations import EXTRA_OPS, annotate_iterations
from perfreport.stats.iteration_formats import parse_iteration
from perfreport.passes.paged_attention_meta import mark_paged_attn_v1_parents, mark_kv_cache_dtype
from perfreport.tree import Op, TraceTree

ROOT = Path(__file__).resolve().parents[2]
FIX = ROOT / "fixtures"
SHARED = ROOT.parent / "shared" / "traces" / "inference"
DEC = "execute_4_context_0(sq0sk0sqsq0sqsk0)_generation_4(sq4sk331sqsq4sqsk331)"
MIX = "execute_19_context_1(sq16sk24sqsq256sqsk384)_generation_3(sq3sk294sqsq3sqsk294)"
UNIFIED = "vllm::unified_attention_with_output"


def _tree(*specs):
    """specs: (name, cat, ts, dur, tid[, args][, parent index])."""
    ops = []
    for i, s in enumerate(specs):
        name, cat, ts, dur, tid = s[:5]
        args = s[5] if len(s) > 5 else None
        o = Op(i, name, cat, 1, tid, ts, dur, args)
        o.children = []
        if len(s) > 6 and s[6] is not None:
            o.parent = ops[s[6]]
            o.parent.children.append(o)
        ops.append(o)
    ordered = sorted(ops, key=lambda o: o.ts)
    return TraceTree("hand", {}, ordered, [], [], [o for o in ops if o.parent is None]), ops


def test_any_thread_and_outside_ops():
    t, o = _tree(
        (DEC, "user_annotation", 0, 100, 1),
        (UNIFIED, "cpu_op", 10, 20, 2),  # other thread, inside
        (UNIFIED, "cpu_op", 90, 20, 1),  # straddles the end: not contained
        (UNIFIED, "cpu_op", 150, 5, 1),  # after
        ("aten::mm", "cpu_op", 20, 5, 1),
    )  # not an attention op
    annotate_iterations(t)
    assert o[1].perf_meta["iteration"] is parse_iteration(DEC)
    assert "iteration" not in o[2].perf_meta
    assert "iteration" not in o[3].perf_meta
    assert "iteration" not in o[4].perf_meta


def test_innermost_wins_and_complete_beats_incomplete():
    t, o = _tree(
        (MIX, "user_annotation", 0, 1000, 1),
        (DEC, "user_annotation", 100, 300, 1),
        ("step[DECODE bs=4]", "user_annotation", 110, 200, 1),  # no sk
        (UNIFIED, "cpu_op", 120, 50, 1),
        (UNIFIED, "cpu_op", 500, 50, 1),
        ("execute_context_0(0)_generation_4(4)", "user_annotation", 2000, 100, 1),
        ("aiter::paged_attention_v1", "cpu_op", 2010, 10, 1),
    )
    annotate_iterations(t)
    assert o[3].perf_meta["iteration"]["annotation"] == DEC  # innermost complete
    assert o[4].perf_meta["iteration"]["annotation"] == MIX
    # only an incomplete annotation around it: it is kept, with its reason
    assert o[6].perf_meta["iteration"]["missing"] == "annotation has no sk (vLLM native format)"


def test_sweep_matches_brute_force():
    rng = random.Random(7)
    specs = []
    for _ in range(60):
        ts = rng.uniform(0, 1000)
        specs.append(
            (
                rng.choice([DEC, MIX, "step[DECODE bs=4]", "other"]),
                "user_annotation",
                ts,
                rng.uniform(1, 200),
                rng.randint(1, 3),
            )
        )
    for _ in range(200):
        specs.append((UNIFIED, "cpu_op", rng.uniform(0, 1100), rng.uniform(0, 30), rng.randint(1, 3)))
    t, ops = _tree(*specs)
    annotate_iterations(t)
    anns = [a for a in ops if a.cat == "user_annotation" and parse_iteration(a.name)]
    for op in ops:
        if op.cat != "cpu_op":
            continue
        inside = [a for a in anns if a.ts <= op.ts and a.ts + a.dur >= op.ts + op.dur]
        want = max(inside, key=lambda a: ("missing" not in parse_iteration(a.name), a.ts, -a.dur), default=None)
        got = op.perf_meta.get("iteration")
        assert got == (parse_iteration(want.name) if want else None)


def test_attention_ops_get_statistics_because_their_models_need_them():
    for n in (
        UNIFIED,
        "aiter::paged_attention_v1",
        "aiter::mha_varlen_fwd",
        "aiter::mha_batch_prefill",
        "aiter::paged_attention_ragged",
        "perfreport::paged_attention_decode",
        "sglang_profiler::attention_paged_attention_ragged",
        "sglang_profiler::attention_paged_attention_ragged_100",
    ):
        assert "iteration" in model_for(n).needs, n
    assert "_rocm_C::paged_attention" in EXTRA_OPS and model_for("_rocm_C::paged_attention") is None
    assert "iteration" not in model_for("aten::_scaled_dot_product_flash_attention").needs


def _rocm_args(k="unsigned char", v="unsigned char"):
    types = ["c10::BFloat16", "float", "float", "c10::BFloat16", "c10::BFloat16", k, v]
    return {"Input type": types + ["Scalar"] * 13}


def test_passes_return_at_once_without_leaf():
    t, o = _tree(("outer", "cpu_op", 0, 100, 1), (UNIFIED, "cpu_op", 10, 50, 1, None, 0))
    mark_paged_attn_v1_parents(t)
    mark_kv_cache_dtype(t)
    assert all(not x.perf_meta for x in o)


def test_rocm_dtype_propagates_to_cpu_op_ancestors_only():
    t, o = _tree(
        (DEC, "user_annotation", 0, 100, 1),
        ("outer", "cpu_op", 1, 98, 1, None, 0),
        (UNIFIED, "cpu_op", 2, 90, 1, None, 1),
        ("_rocm_C::paged_attention", "cpu_op", 3, 80, 1, _rocm_args("c10::Float8_e4m3fnuz", "unsigned char"), 2),
    )
    mark_kv_cache_dtype(t)
    for x in (o[1], o[2]):
        assert x.perf_meta["KCache_dtype"] == "c10::Float8_e4m3fnuz"
    assert not o[0].perf_meta and not o[3].perf_meta  # annotation and the leaf itself


def test_aiter_parents_excluded():
    t, o = _tree(
        ("outer", "cpu_op", 0, 100, 1),
        (UNIFIED, "cpu_op", 2, 90, 1, None, 0),
        ("aiter::paged_attention_v1", "cpu_op", 3, 80, 1, None, 1),
        (UNIFIED, "cpu_op", 200, 10, 1),
    )  # no aiter leaf under it
    mark_paged_attn_v1_parents(t)
    assert o[0].perf_meta["exclude_perf_model"] is True
    assert o[1].perf_meta["exclude_perf_model"] is True
    assert "exclude_perf_model" not in o[2].perf_meta
    assert not o[3].perf_meta


# -- fixture traces through the real loader -------------------------------------------
load_tree = pytest.importorskip("perfreport.pipeline").load_tree


def test_rocm_fixture():
    t = load_tree(str(FIX / "inference_rocm_paged_attention.json.gz"))
    parents = t.ops_named(UNIFIED)
    assert len(parents) == 6
    # capture order: bf16 cache (decode, mixed), float8_e4m3fnuz, uint8
    assert [p.perf_meta["KCache_dtype"] for p in parents] == (
        ["c10::BFloat16"] * 2 + ["c10::Float8_e4m3fnuz"] * 2 + ["unsigned char"] * 2
    )
    assert [p.perf_meta["iteration"]["annotation"] for p in parents] == [DEC, MIX] * 3
    assert not any(p.perf_meta.get("exclude_perf_model") for p in parents)


def test_aiter_fixture():
    t = load_tree(str(FIX / "inference_aiter_paged_attention_v1.json.gz"))
    parents = t.ops_named(UNIFIED)
    leaves = t.ops_named("aiter::paged_attention_v1")
    assert len(parents) == len(leaves) == 6
    assert all(p.perf_meta["exclude_perf_model"] is True for p in parents)
    assert all(not lf.perf_meta.get("exclude_perf_model") for lf in leaves)
    assert [lf.perf_meta["iteration"]["annotation"] for lf in leaves] == [DEC, MIX] * 3
    assert [lf.args["Input type"][3] for lf in leaves] == (
        ["c10::BFloat16"] * 2 + ["c10::Float8_e4m3fnuz"] * 2 + ["unsigned char"] * 2
    )
    assert not any("KCache_dtype" in p.perf_meta for p in parents)


@pytest.mark.parametrize(
    "rel", ["vllm_decode_full/graph_execution.json.gz", "sglang_decode/sglang_Qwen3-8B_decode.json.gz"]
)
def test_shared_traces_get_no_perf_meta(rel):
    p = SHARED / rel
    if not p.exists():
        pytest.skip("shared traces not present")
    t = load_tree(str(p))
    assert not any(o.perf_meta for o in t.ops)
