"""perfreport diff: matching rules, self-diff, one op slowed 2x, report inputs, the CI gate."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from perfreport.diff import diff, regressions
from perfreport.diff.match import RULES, kernel_names, match_rows
from tests.cli.forked_cli import run

from diff_traces import FIX, H100, SLOW_OP, slowed_trace  # noqa: F401 (a fixture)

MI300 = FIX / "mi300_qwen_0.5b.json.gz"
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def self_diff():
    return diff(str(H100), str(H100))


@pytest.fixture(scope="module")
def slow_diff(slowed_trace):
    return diff(str(H100), str(slowed_trace))


def test_trace_against_itself_has_all_deltas_zero(self_diff):
    ops = self_diff.sheet("diff_ops").records()
    assert ops and all(r["delta (µs)"] == 0.0 for r in ops)
    assert {r["match"] for r in ops} == {RULES[0]}
    assert all(r["speedup (A/B)"] == 1.0 for r in ops if r["time A (µs)"] > 0)
    tl = self_diff.sheet("diff_gpu_timeline").records()
    assert tl and all(r["delta (ms)"] == 0.0 for r in tl)
    assert self_diff.sheet("diff_summary").records()[0]["delta"] == 0.0


def test_one_op_slowed_2x_shows_exactly_that_op_at_half_speed(slow_diff):
    ops = slow_diff.sheet("diff_ops").records()
    changed = [r for r in ops if r["delta (µs)"] != 0.0]
    assert len(changed) == 1
    r = changed[0]
    assert (r["name"], r["input dims"]) == (SLOW_OP[0], "(8944, 1024), (1024, 2816)")
    assert r["match"] == "name+shapes+dtypes" and r["status"] == "slower"
    assert r["speedup (A/B)"] == pytest.approx(0.5, rel=1e-12)
    assert r["time B (µs)"] == pytest.approx(2 * r["time A (µs)"], rel=1e-12)
    assert ops[0]["name"] == SLOW_OP[0]  # largest |delta| first
    # the roofline share halves with the time (same FLOPs and bytes, twice the time)
    assert r["roofline mean B (%)"] == pytest.approx(r["roofline mean A (%)"] / 2, rel=1e-9)


def test_gate_fails_only_beyond_the_threshold(slow_diff, self_diff):
    bad = regressions(slow_diff, 50.0, top=5)
    assert any(SLOW_OP[0] in line for line in bad)  # +100% > 50%
    assert regressions(slow_diff, 150.0, top=5) == []  # +100% < 150%
    assert regressions(self_diff, 0.0, top=100) == []


def test_matching_rules_in_order_and_each_row_once():
    a = [
        {
            "name": "aten::mm",
            "category": "GEMM",
            "input dims": "(4, 8), (8, 16)",
            "input types": "float, float",
            "count": 2,
            "time sum (µs)": 10.0,
            "kernels": "gemm_a [stream 7] x2, mean 5.000 µs",
        },
        {
            "name": "aten::add",
            "category": "elementwise",
            "input dims": "(4)",
            "input types": "float",
            "count": 1,
            "time sum (µs)": 3.0,
            "kernels": "add_k [stream 7] x1, mean 3.000 µs",
        },
        {
            "name": "(unlinked) nccl_ar",
            "category": "unlinked",
            "input dims": "",
            "input types": "",
            "count": 1,
            "time sum (µs)": 7.0,
            "kernels": "nccl_ar [stream 9] x1, mean 7.000 µs",
        },
        {
            "name": "aten::gone",
            "category": "other",
            "input dims": "",
            "input types": "",
            "count": 1,
            "time sum (µs)": 1.0,
            "kernels": "",
        },
    ]
    b = [
        {
            "name": "aten::mm",
            "category": "GEMM",
            "input dims": "(4, 8), (8, 16)",
            "input types": "float, float",
            "count": 2,
            "time sum (µs)": 8.0,
            "kernels": "gemm_b [stream 7] x2, mean 4.000 µs",
        },
        {
            "name": "aten::add",
            "category": "elementwise",
            "input dims": "(8)",
            "input types": "float",
            "count": 1,
            "time sum (µs)": 6.0,
            "kernels": "add_k [stream 7] x1, mean 6.000 µs",
        },
        {
            "name": "c10d::allreduce_",
            "category": "other",
            "input dims": "",
            "input types": "",
            "count": 1,
            "time sum (µs)": 7.5,
            "kernels": "nccl_ar [stream 9] x1, mean 7.500 µs",
        },
        {
            "name": "aten::new",
            "category": "other",
            "input dims": "",
            "input types": "",
            "count": 1,
            "time sum (µs)": 2.0,
            "kernels": "new_k [stream 7] x1, mean 2.000 µs",
        },
    ]
    ms = match_rows(a, b)
    by = {(m.a or m.b).rows[0]["name"]: m for m in ms}
    assert by["aten::mm"].rule == "name+shapes+dtypes"
    assert by["aten::add"].rule == "name+category"  # shapes changed
    assert by["(unlinked) nccl_ar"].rule == "kernel name"  # now launched by an op
    assert by["aten::gone"].rule == "vanished" and by["aten::new"].rule == "appeared"
    assert sum(len(m.a.rows) for m in ms if m.a) == len(a)
    assert sum(len(m.b.rows) for m in ms if m.b) == len(b)
    assert kernel_names("k1 [stream 7] x2, mean 1.000 µs; k2 [stream 8] x1, mean 2.000 µs") == {"k1", "k2"}


def test_report_json_workbook_and_csv_dir_inputs_match_the_trace(tmp_path, slow_diff, slowed_trace):
    from perfreport import analyze

    ra, rb = analyze(str(H100)), analyze(str(slowed_trace))
    ra.to_json(tmp_path / "a.json")
    rb.to_csv_dir(tmp_path / "b_csv")
    ra.to_excel(tmp_path / "a.xlsx")
    cols = ["match", "name", "input dims", "time A (µs)", "time B (µs)", "speedup (A/B)"]
    want = [[r[c] for c in cols] for r in slow_diff.sheet("diff_ops").records()]
    d = diff(str(tmp_path / "a.json"), str(tmp_path / "b_csv"))  # exact round trips
    assert [[r[c] for c in cols] for r in d.sheet("diff_ops").records()] == want
    assert d.sheet("diff_gpu_timeline").records() == slow_diff.sheet("diff_gpu_timeline").records()
    # a workbook keeps 15 significant digits (Excel's precision): equal to ~1e-13
    d = diff(str(tmp_path / "a.xlsx"), str(tmp_path / "b_csv"))
    got = sorted(([r[c] for c in cols] for r in d.sheet("diff_ops").records()), key=lambda x: (x[1], x[2]))
    exp = sorted(want, key=lambda x: (x[1], x[2]))
    assert [g[:3] for g in got] == [w[:3] for w in exp]
    assert [g[3:] for g in got] == [pytest.approx(w[3:], rel=1e-12) for w in exp]


def test_mi300x_against_h100_matches_ops_by_shape():
    d = diff(str(MI300), str(H100))
    ops = d.sheet("diff_ops").records()
    exact = [r for r in ops if r["match"] == RULES[0]]
    names = {r["name"] for r in exact}
    assert {"aten::mm", "aten::addmm", "aten::_scaled_dot_product_flash_attention"} <= names
    mm = next(r for r in exact if r["name"] == "aten::mm" and r["input dims"] == "(8944, 1024), (1024, 2816)")
    assert mm["count A"] == mm["count B"] == 48
    assert mm["roofline mean A (%)"] is not None and mm["roofline mean B (%)"] is not None
    deltas = [abs(r["delta (µs)"]) for r in ops]
    assert deltas == sorted(deltas, reverse=True)


# a real process: a child forked from the server that has imported the command line (tests/cli/forked_cli.py)
def _cli(*args):
    return run("diff", *args, text=True, cwd=ROOT, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})


def test_cli_gate_exit_codes_and_outputs(tmp_path, slowed_trace):
    r = _cli(
        H100,
        slowed_trace,
        "--fail-if-slower",
        "50",
        "--top",
        "3",
        "-q",
        "--json",
        tmp_path / "d.json",
        "--csv-dir",
        tmp_path / "csv",
        "-o",
        tmp_path / "d.xlsx",
    )
    assert r.returncode == 1, r.stderr
    assert "slower by more than 50%" in r.stderr and "aten::mm" in r.stderr
    doc = json.loads((tmp_path / "d.json").read_text())
    assert set(doc["sheets"]) == {"diff_summary", "diff_context", "diff_ops", "diff_gpu_timeline"}
    assert (tmp_path / "csv" / "diff_ops.csv").is_file() and (tmp_path / "d.xlsx").is_file()
    ok = _cli(H100, slowed_trace, "--fail-if-slower", "150", "--sheet", "diff_summary", "--format", "json")
    assert ok.returncode == 0, ok.stderr
    assert json.loads(ok.stdout)["sheet"] == "diff_summary"


def test_cli_bad_input_is_one_line(tmp_path):
    r = _cli(H100, tmp_path / "missing.json")
    assert r.returncode == 2
    assert r.stderr.strip().count("\n") == 0 and "missing.json" in r.stderr
    empty = tmp_path / "empty_dir"
    empty.mkdir()
    r = _cli(empty, H100)
    assert r.returncode == 2 and "unified_perf_summary.csv" in r.stderr


def test_single_sheet_json_input(tmp_path, slowed_trace):
    out = run(
        "analyze",
        slowed_trace,
        "-q",
        "--sheet",
        "unified_perf_summary",
        "--format",
        "json",
        text=True,
        cwd=ROOT,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
    )
    assert out.returncode == 0, out.stderr
    (tmp_path / "b.json").write_text(out.stdout)
    d = diff(str(H100), str(tmp_path / "b.json"))
    changed = [r for r in d.sheet("diff_ops").records() if r["delta (µs)"] != 0.0]
    assert [(r["name"], r["speedup (A/B)"]) for r in changed] == [(SLOW_OP[0], pytest.approx(0.5))]
    tl = d.sheet("diff_gpu_timeline").records()  # a single sheet has no timeline:
    assert tl and all(r["time B (ms)"] is None and r["delta (ms)"] is None for r in tl)  # A's only


@pytest.mark.parametrize(
    "rows, needle",
    [
        ([{"name": "a", "time sum (µs)": "fast"}], "'time sum (µs)' is 'fast', not a number"),
        ([{"name": "a"}], "has no 'time sum (µs)' column"),
        ([{"name": "a", "time sum (µs)": None}], "is None, not a number"),
        ([{"name": "a", "time sum (µs)": 1.0, "count": "x"}], "'count' is 'x'"),
        ([{"name": "a", "time sum (µs)": True}], "is True, not a number"),
    ],
)
def test_rows_need_a_numeric_time(rows, needle):
    from perfreport.diff.load import checked_rows
    from perfreport.errors import BadInput

    with pytest.raises(BadInput, match=re.escape(needle)):
        checked_rows(rows, "r.json", "unified_perf_summary")


def test_row_limit(monkeypatch):
    from perfreport.diff import load
    from perfreport.errors import BadInput

    monkeypatch.setattr(load, "MAX_ROWS", 3)
    rows = [{"name": "a", "time sum (µs)": 1.0}] * 4
    with pytest.raises(BadInput, match="more than the 3"):
        load.checked_rows(rows, "r.json", "unified_perf_summary")
    assert load.checked_rows(rows[:3], "r.json", "unified_perf_summary") == rows[:3]
