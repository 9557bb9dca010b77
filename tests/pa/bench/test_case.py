"""pa/bench/case.py: one bench case, its decode statistics and annotation, and the op view the
paged-attention model reads (the same one ``analyze`` sees in a ``--trace``)."""

from __future__ import annotations

from perfreport.pa.bench.case import OP_NAME, PACase, model_for_case, op_view, roofline_for_case
from perfreport.specs import load_arch
from perfreport.stats.iteration_formats import parse_iteration

CASE = PACase(context=1000, batch=2, q_len=4, q_heads=16, kv_heads=2, head_dim=128, v_head_dim=64, page=64)


def test_derived_sizes():
    assert (CASE.pages_per_seq, CASE.num_blocks, CASE.context_lens) == (16, 32, [1000, 1000])  # ceil(1000 / 64)
    assert CASE.scale == 128**-0.5
    assert (CASE.storage, CASE.with_storage("fp8_fnuz").storage, PACase(context=64, kv_dtype="fp8").storage) == (
        "bf16",
        "fp8_fnuz",
        "fp8",
    )
    assert (
        CASE.kernel_layout,
        PACase(context=64, layout="5DV").kernel_layout,
        PACase(context=64, layout="5DV").v5,
    ) == ("NHD", "5D", True)


def test_iteration_statistics_and_the_annotation_agree():
    it = CASE.iteration()
    assert (it["g_sq"], it["g_sk"], it["g_sqsq"], it["g_sqsk"], it["g_reqs"]) == (8, 2000, 32, 8000, 2)
    assert CASE.annotation() == "execute_8_context_0(sq0sk0sqsq0sqsk0)_generation_2(sq8sk2000sqsq32sqsk8000)"
    parsed = parse_iteration(CASE.annotation())
    assert {k: parsed[k] for k in it} == it


def test_cache_dims_per_layout():
    assert CASE.cache_dims() == ([32, 64, 2, 128], [32, 64, 2, 64])
    five = PACase(context=1000, batch=2, kv_heads=2, head_dim=128, v_head_dim=64, page=64, layout="5D")
    assert five.cache_dims() == ([32, 2, 16, 64, 8], [32, 2, 64, 64])  # bf16: x = 8
    fp8v = PACase(context=1000, batch=2, kv_heads=2, head_dim=128, v_head_dim=64, page=64, layout="5DV", kv_dtype="fp8")
    assert fp8v.cache_dims() == ([32, 2, 8, 64, 16], [32, 2, 4, 64, 16])  # fp8: x = 16


def test_op_view_is_what_the_profiler_records():
    v = op_view(CASE)
    assert v.name == OP_NAME
    dims, types = v.args["Input Dims"], v.args["Input type"]
    assert dims[:2] == [[8, 16, 64], [8, 16, 128]] and dims[4:6] == [[2, 16], [2]]
    assert types[2] == types[3] == "c10::BFloat16" and dims[6] == [] and types[6] == ""
    assert v.args["Concrete Inputs"][-2:] == [repr(128**-0.5), "NHD"]
    fp8 = op_view(PACase(context=64, kv_dtype="fp8"))
    assert fp8.args["Input type"][2] == "c10::Float8_e4m3fn" and fp8.args["Input Dims"][6] == [1]
    assert v.perf_meta["iteration"] == CASE.iteration()


def test_the_registry_model_evaluates_the_case():
    model, reason = model_for_case(CASE)
    assert reason is None and model.flops() > 0 and model.bytes() > 0
    out = roofline_for_case(CASE, None)
    assert (out["flops"], out["bytes"], out["reason"]) == (model.flops(), model.bytes(), "no GPU spec (use --arch)")
    r = roofline_for_case(CASE, load_arch("h100_sxm"))
    assert r["roofline_us"] > 0 and r["bound"] in ("memory", "compute") and r["reason"] == ""


def test_inputs_follow_the_case():
    """The case's inputs have its sizes: 2 sequences of 40 tokens in pages of 16 -> 3 pages each;
    the 5DV layout's V cache is the 5-D vectorized one ([blocks, H_KV, page/x, Dv, x], x = 8 for bf16)."""
    c = PACase(context=40, batch=2, q_len=1, q_heads=4, kv_heads=1, head_dim=32, v_head_dim=16, page=16, layout="5DV")
    inp = c.inputs(seed=0)
    assert tuple(inp.query.shape) == (2, 4, 32) and tuple(inp.block_tables.shape) == (2, 3)
    assert inp.context_lens.tolist() == [40, 40]
    assert tuple(inp.value_cache.shape)[1:] == (1, 2, 16, 8)
