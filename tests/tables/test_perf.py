"""Unified perf table and per-category sheets on real traces, checked against reference values."""

from __future__ import annotations

import ast

import pytest

from perfreport.pipeline import load_tree
from perfreport.specs import detect_arch
from perfreport.tables import build_sheets
from perfreport.tables.sheet import fmt_dims
from tests.conftest import FIX
from tests.kit.cached import analyzed

ALL = [
    "h100_qwen_0.5b",
    "mi300_qwen_0.5b",
    "mi210_gpu_only",
    "vllm_decode_graph",
    "sglang_decode",
    "torch_compile_triton",
]


def _sheets(name):
    tree = load_tree(str(FIX / f"{name}.json.gz"))
    spec = detect_arch(tree.meta.get("deviceProperties"))
    return tree, spec, {s.name: s for s in build_sheets(tree, spec=spec)}


@pytest.fixture(scope="module", params=["h100", "mi300"])
def qwen(request):
    return (request.param,) + _sheets(f"{request.param}_qwen_0.5b")


@pytest.mark.parametrize("name", ALL)
def test_unified_counts_every_gpu_event_once(name):
    tree, _, sheets = _sheets(name)
    df = sheets["unified_perf_summary"].df
    assert df["time sum (µs)"].sum() == pytest.approx(sum(g.dur for g in tree.gpu), abs=1e-6)
    assert df["percent (%)"].sum() == pytest.approx(100.0)


def test_arch_detected(qwen):
    which, _, spec, _ = qwen
    assert spec is not None
    assert spec.key == {"h100": "h100_sxm", "mi300": "mi300x"}[which]


@pytest.mark.parametrize("cat,ref_file", [("GEMM", "GEMM.csv"), ("SDPA_fwd", "SDPA_fwd.csv")])
def test_gflop_and_bytes_equal_reference(qwen, cat, ref_file):
    import pandas as pd  # here, not at collection (0.65 CPU s a pytest-xdist worker)

    which, _, _, sheets = qwen
    ours = sheets["unified_perf_summary"].df
    ref = pd.read_csv(FIX / "reference" / which / ref_file)
    assert len(ref) >= 1
    for _, r in ref.iterrows():
        dims = fmt_dims(ast.literal_eval(r["Input Dims_first"]))
        row = ours[(ours["name"] == r["name"]) & (ours["input dims"] == dims)]
        assert len(row) >= 1, (r["name"], dims)
        row = row.iloc[0]
        assert row["category"] == cat
        assert row["GFLOP"] == pytest.approx(r["GFLOPS_first"], rel=1e-9)
        # their "Data Moved (MB)" is MiB (2^20 bytes); ours is SI MB (10^6 bytes)
        assert row["data moved (MB)"] * 1e6 == pytest.approx(r["Data Moved (MB)_first"] * 2**20, rel=1e-9)
        assert row["compute spec"] == r["Compute Spec"]


def test_roofline_columns_filled_for_gemm_and_attention(qwen):
    _, _, _, sheets = qwen
    df = sheets["unified_perf_summary"].df
    mm = df[df["category"].isin(["GEMM", "SDPA_fwd"])]
    assert len(mm) >= 3
    assert mm["roofline time (µs)"].notna().all()
    assert ((mm["roofline mean (%)"] > 0) & (mm["roofline mean (%)"] <= 100.0)).all()
    assert set(mm["bound"]) <= {"compute", "memory"}
    assert "GEMM" in sheets and "SDPA_fwd" in sheets
    gemm = sheets["GEMM"].df
    assert {"param: M", "param: N", "param: K"} <= set(gemm.columns)


def test_roofline_hand_value_h100_gemm():
    """aten::mm (8944x1024)@(1024x2816) bf16 on H100 SXM (989.4 TFLOP/s dense bf16, 3.35 TB/s).

    FLOP = 2*8944*2816*1024 = 51,581,550,592 -> 51.58 GFLOP; bytes = 2*(8944*1024 + 1024*2816
    + 8944*2816) = 74,457,088; FLOP/byte = 692.8 > ridge 295 -> compute bound;
    roofline = 51.58e9 / 989.4e12 s = 52.13 µs.
    """
    _, spec, sheets = _sheets("h100_qwen_0.5b")
    df = sheets["unified_perf_summary"].df
    row = df[(df["name"] == "aten::mm") & (df["input dims"] == "(8944, 1024), (1024, 2816)")].iloc[0]
    assert row["bound"] == "compute"
    assert row["roofline time (µs)"] == pytest.approx(51_581_550_592 / (spec.peaks["matrix_bf16"] * 1e12) * 1e6)
    assert spec.peaks["matrix_bf16"] == pytest.approx(989.4, rel=0.01)
    assert row["roofline time (µs)"] == pytest.approx(52.13, abs=0.05)


def test_unlinked_kernels_have_their_own_rows(qwen):
    _, tree, _, sheets = qwen
    df = sheets["unified_perf_summary"].df
    un = df[df["name"].str.startswith("(unlinked) ")]
    assert un["time sum (µs)"].sum() == pytest.approx(sum(g.dur for g in tree.gpu if g.launcher is None))


def test_per_category_sheets_lead_with_the_unified_columns():
    """Issue 23: GEMM had roofline mean (%) in column AB; every per-category sheet now starts
    with the unified sheet's lead (name, category, time, share, roofline %, bound, flags, dims)."""
    from perfreport.tables.perf import LEAD_COLS
    from perfreport.writers.summary import WORKBOOK_LEAD
    from tests.conftest import FIX

    rep = analyzed(str(FIX / "h100_qwen_0.5b.json.gz"))
    cats = [s for s in rep.sheets if s.name in {r["category"] for r in rep.sheet("unified").records()}]
    assert cats and WORKBOOK_LEAD == LEAD_COLS
    for s in cats:
        assert s.columns[: len(LEAD_COLS)] == LEAD_COLS, s.name
        assert s.columns.index("roofline mean (%)") == 4  # column E
        assert len(set(s.columns)) == len(s.columns)


def test_roofline_percents_of_all_timed_instances_read_as_the_nan_skipping_ones():
    import numpy as np

    from perfreport.tables.perf import _roofline_pcts

    rng = np.random.default_rng(11)
    for n in [1, 2, 3, 7, 8, 9, 16, 17, 100, 1000]:
        t = rng.lognormal(2, 1.5, n)
        rt = float(rng.lognormal(2, 1))
        fast, slow = {}, {}
        p_fast = _roofline_pcts(fast, t, True, rt, rt / 2, rt * 3)
        p_slow = _roofline_pcts(slow, t, np.ones(n, dtype=bool), rt, rt / 2, rt * 3)  # (the NaN path)
        assert fast == slow and p_fast.tolist() == p_slow.tolist()


def test_first_unlinked_starts_are_the_first_events_of_each_name():
    from pathlib import Path

    from perfreport.tables.perf import _first_unlinked_ts

    fix = Path(__file__).resolve().parents[2] / "fixtures"
    for name in ("mi210_gpu_only", "sglang_tiny_graph"):
        tree = load_tree(str(fix / f"{name}.json.gz"))
        want: dict = {}
        for g in tree.gpu:
            if g.launcher is None:
                want.setdefault(f"(unlinked) {g.name}", g.ts)
        assert _first_unlinked_ts(tree) == want
