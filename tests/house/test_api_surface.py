"""Issue 23: the Python API in a REPL or notebook -- a short repr, _repr_html_, dir(perfreport),
typed DataFrames -- and no process-wide side effect (glibc malloc) without an opt-in."""

from __future__ import annotations

import subprocess
import sys

import pytest

import perfreport
from tests.conftest import FIX


@pytest.fixture(scope="module")
def report():
    return perfreport.analyze(FIX / "h100_qwen_0.5b.json.gz")


def test_dir_lists_the_public_names_and_each_has_a_docstring():
    names = [n for n in dir(perfreport) if not n.startswith("__")]
    assert names == sorted(n for n in perfreport.__all__ if not n.startswith("__"))
    assert {"analyze", "load_tree", "analyze_ranks", "Report", "Sheet", "GpuSpec", "BadInput"} <= set(names)
    for n in names:
        assert getattr(perfreport, n).__doc__, n


def test_repr_is_one_short_line(report):
    r = repr(report)
    assert len(r) < 400 and "\n" not in r, r  # was ~220,000 characters
    assert r.startswith("<Report '") and "h100_qwen_0.5b.json.gz" in r
    assert "unified_perf_summary (" in r and "GPU spec h100_sxm" in r and "modelled " in r
    s = repr(report.sheet("unified"))
    assert s.startswith("<Sheet 'unified_perf_summary': ") and "rows ×" in s and len(s) < 200


def test_repr_html_shows_coverage_and_top_rows(report):
    h = report._repr_html_()
    assert "coverage of " in h and "<table>" in h and h.count("<tr>") == 11  # header + top 10
    assert "aten::mm" in h and "<script" not in h
    assert "<table>" in report.sheet("GEMM")._repr_html_()


def test_to_pandas_types(report):
    df = report.sheet("unified_perf_summary").to_pandas()
    assert str(df["time sum (µs)"].dtype) == "float64" and str(df["count"].dtype) == "int64"
    assert str(df["roofline mean (%)"].dtype) == "float64"  # blanks are NaN, not None
    mm = df[df["name"] == "aten::mm"].iloc[0]
    assert isinstance(mm["input dims"], tuple) and all(isinstance(t, tuple) for t in mm["input dims"])
    assert all(isinstance(x, int) for t in mm["input dims"] for x in t)
    assert df["name"].iloc[0] == "aten::mm" and df["name"].dtype.kind not in "fiu"  # text stays text


def test_analyze_leaves_malloc_alone_unless_asked():
    code = (
        "import perfreport, perfreport.read.heap as h; "
        "perfreport.analyze('fixtures/h100_qwen_0.5b.json.gz'); print(h._tuned); "
        "perfreport.analyze('fixtures/h100_qwen_0.5b.json.gz', tune_malloc=True); print(h._tuned)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=FIX.parent)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["False", "True"]
