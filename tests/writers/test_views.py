"""Every console view at 80, 120 and 200 columns: snapshots (tests/writers/snapshots/, regenerate
with UPDATE_SNAPSHOTS=1) and the checks of tests/writers/view_checks.py: no line wider than the
console, no word folded, no number cut. The checks are shown to fail on rich's folding table."""

from __future__ import annotations

import os
from pathlib import Path
from types import SimpleNamespace

import pytest
from rich.table import Table

from perfreport.diff import Side, diff_sides
from perfreport.writers import console as C
from perfreport.writers import diff_console as D
from perfreport.writers.audit import audit_lines, print_audit, shape_text
from perfreport.writers.fit_table import Col, fit
from tests.writers import view_checks as V
from tests.writers.test_console import synthetic

SNAP = Path(__file__).parent / "snapshots"
WIDTHS = [80, 120, 200]
WIDE = 100_000


def snapshot(name: str, text: str) -> None:
    snap = SNAP / f"{name}.txt"
    if os.environ.get("UPDATE_SNAPSHOTS"):
        snap.write_text(text, encoding="utf-8")
    assert text == snap.read_text(encoding="utf-8")


def check_view(name, draw, tables, width):
    """Render ``draw`` at ``width``; ``tables(width)``: the Fitted tables it prints."""
    out = V.render(draw, width)
    source = V.render(draw, WIDE) + " " + " ".join(V.fitted_source(f) for f in tables(WIDE))
    numbers = [n for f in tables(width) for n in V.fitted_numbers(f)]
    V.check(out, width, source, numbers)
    snapshot(f"{name}_{width}", out)
    return out


# -- the single-trace summary ------------------------------------------------------------------


@pytest.mark.parametrize("width", WIDTHS)
def test_summary(width):
    r = synthetic()
    out = check_view(
        "summary",
        lambda c: C.print_summary(r, c),
        lambda w: [C.timeline_table(r, w), C.ops_table(r, w)[0]],
        width,
    )
    # flags: one letter per flag, the legend under the table, at every width
    assert "R A" in out and "flags: R above roofline, A assumption (each in full: --audit)" in out


# -- the diff -----------------------------------------------------------------------------------


def _side(report, scale: float, name: str) -> Side:
    ops = report.sheet("unified_perf_summary").records()
    for i, dims in enumerate(["(8, 64, 64), (8, 64, 64)", "(8, 64, 128), (8, 128, 64)", "(4, 2), (4, 2)"]):
        ops.append({"name": "aten::bmm", "category": "GEMM", "input dims": dims, "time sum (µs)": 100.0 * (i + 1)})
    for r in ops:
        r["time sum (µs)"] = r["time sum (µs)"] * (scale if r["name"] != "aten::add" else 1.0)
    tl = report.sheet("gpu_timeline").records()
    return Side(name, ops, tl, [f"GPU spec: NVIDIA H100 SXM5 80GB ({name})"], "report JSON")


def synthetic_diff():
    return diff_sides(_side(synthetic(), 1.0, "before.json"), _side(synthetic(), 0.8, "after.json"))


@pytest.mark.parametrize("width", WIDTHS)
def test_diff(width):
    d = synthetic_diff()
    out = check_view(
        "diff",
        lambda c: D.print_diff_summary(d, c),
        lambda w: [D.diff_summary_table(d, w), D.diff_ops_table(d, w), D.diff_timeline_table(d, w)],
        width,
    )
    assert "A: before.json (report JSON) — GPU spec: NVIDIA H100 SXM5 80GB (before.json)" in out.replace("\n  ", " ")
    bmm = [line for line in out.splitlines() if line.startswith("aten::bmm")]
    assert len(bmm) == 3 and len(set(bmm)) == 3  # the shapes tell the rows of one name apart


def test_self_diff_lists_rows_by_time():
    s = _side(synthetic(), 1.0, "same.json")
    ops = diff_sides(s, s).sheet("diff_ops").records()
    times = [r["time A (µs)"] for r in ops]
    assert times == sorted(times, reverse=True) and times[0] == pytest.approx(262422.4)


# -- the multi-rank summary -------------------------------------------------------------------


@pytest.fixture(scope="module")
def merged(tmp_path_factory):
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "multi"))
    from rank_fragments import write_fragments

    from perfreport.multi import analyze_ranks

    d = tmp_path_factory.mktemp("views")
    cwd = os.getcwd()
    os.chdir(d)  # relative trace names: the snapshot does not depend on the tmp path
    try:
        write_fragments(Path("run"), 4)
        return analyze_ranks("run", engine="serial")
    finally:
        os.chdir(cwd)


@pytest.mark.parametrize("width", WIDTHS)
def test_multi(merged, width):
    from perfreport.writers import console_multi as M

    def tables(w):
        return [
            M._view(merged.sheet("ranks"), M.RANKS, w, None, "ranks"),
            M._view(merged.sheet("ops_by_rank"), M.OPS, w, 15, ""),
            M._view(merged.sheet("collectives"), M.COLLECTIVES, w, 15, ""),
        ]

    out = check_view("multi", lambda c: M.print_summary_multi(merged, c), tables, width)
    assert "distributedInfo" in out and "allreduce" in out and "(64,64),(64,64)" in out


# -- --audit ------------------------------------------------------------------------------------


def flagged():
    r = synthetic()
    uni = r.sheet("unified_perf_summary")
    i = uni.columns.index("flags")
    for n in range(15):  # many host-link rows must not bury the one above-roofline row
        row = list(uni.rows[-1])
        row[0], row[3], row[i] = f"Memcpy HtoD {n}", 10.0 + n, "host link: judged on the 64 GB/s host link, not HBM"
        row[10] = "(1048576), ()"
        uni.rows.append(row)
    r.coverage = SimpleNamespace(
        lines=lambda shorten=None: ["coverage of 427.6 ms GPU time: modelled 97.0%, unmodelled 3.0% " * 2]
    )
    return r


@pytest.mark.parametrize("width", WIDTHS)
def test_audit(width):
    r = flagged()
    out = V.render(lambda c: print_audit(r, c), width)
    V.check(out, width, " ".join(audit_lines(r)))
    snapshot(f"audit_{width}", out)
    lines = out.splitlines()
    above = next(i for i, line in enumerate(lines) if line.startswith("flags: above roofline"))
    assert above < 8  # among the totals at the top
    groups = [line for line in lines if line.endswith(", by GPU time affected:")]
    assert groups == [
        "above roofline, by GPU time affected:",
        "assumption, by GPU time affected:",
        "host link, by GPU time affected:",
    ]
    flat = " ".join(out.split())
    assert "(32, 16, 4, 192)" not in flat and "[32×16×4×192, 1024×64×1×192] x12,345" in flat


def test_shape_text():
    assert shape_text("(12, 192), (8, 64, 192), (8), (), ()") == "12×192, 8×64×192, 8"
    assert shape_text("[(1, 2), (3, 4)], (5)") == "[1×2, 3×4], 5"
    assert shape_text("") == ""


# -- --format table -----------------------------------------------------------------------------


@pytest.mark.parametrize("width", WIDTHS)
def test_format_table(width):
    sheet = synthetic().sheet("unified_perf_summary")
    out = C.table_text(sheet, width)
    f = C.sheet_view(sheet, width)
    full = C.sheet_view(sheet, WIDE)
    V.check(out, width, V.fitted_source(full) + " " + out, V.fitted_numbers(f))
    snapshot(f"format_table_{width}", out)
    assert out.splitlines()[0] == "unified_perf_summary"
    if f.dropped:
        assert f"not shown at {width} columns: " in out


# -- the checks themselves can fail ---------------------------------------------------------------


def test_checks_catch_a_folded_word_and_a_cut_number():
    def folding(c):
        t = Table(title="ranks")
        t.add_column("source", overflow="fold")
        t.add_column("kernel time (µs)", overflow="ellipsis", no_wrap=True, max_width=6)
        t.add_row("distributedInfo", "167.123")
        c.print(t)

    out = V.render(folding, 24)
    with pytest.raises(AssertionError, match="folded"):
        V.check(out, 24, "ranks source kernel time (µs) distributedInfo 167.123")
    with pytest.raises(AssertionError, match="cut"):
        V.check(out, 24, out, ["167.123"])
    good = fit([{"source": "distributedInfo", "t": "167.123"}], [Col("source", flex=True), Col("t", num=True)], 24)
    V.check(V.render(lambda c: c.print(good), 24), 24, V.fitted_source(good), V.fitted_numbers(good))


# -- bench-pa's table ---------------------------------------------------------------------------


def bench_result():
    from perfreport.pa.bench.run import BenchResult
    from tests.pa.bench.test_table import _row

    rows = [
        _row(),
        _row(kv_dtype="fp8", layout="5D", backend="triton", context=1048576, speedup=1.7),
        _row(backend="torch", median_us=167123.4, speedup=None, status="ok"),
    ]
    return BenchResult(rows=rows, device="NVIDIA H200", arch="NVIDIA H200 SXM", clock="gpu-events")


@pytest.mark.parametrize("width", WIDTHS)
def test_bench_pa(width):
    from perfreport.cli.bench_pa import fit_bench_table, print_table

    res = bench_result()
    out = check_view("bench_pa", lambda c: print_table(res, c), lambda w: [fit_bench_table(res, w)], width)
    assert "64K B32 q4 16:1 192/128 p64" in out and "167,123.4" in out  # shape and time whole
