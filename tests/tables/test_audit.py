"""The audit view: flagged rows by GPU time affected, totals per flag tag."""

from __future__ import annotations

import pytest

from perfreport.tables.audit import audit_sheet, audit_totals
from perfreport.tables.sheet import Sheet


def test_audit_orders_by_time_and_totals_per_tag():
    uni = Sheet(
        "unified_perf_summary",
        ["name", "input dims", "count", "time sum (µs)", "roofline max (%)", "flags"],
        [
            ["a", "", 2, 10.0, 150.0, "above roofline: 2 of 2 instances above 100%; likely x | bimodal: y"],
            ["b", "(4)", 1, 30.0, 50.0, "bimodal: z"],
            ["c", "", 1, 60.0, 20.0, ""],
        ],
    )
    a = audit_sheet(uni)
    recs = a.records()
    # b (30 µs) first, then a's two flags (10 µs each); c has none. Total 100 µs.
    assert [(r["flag"], r["name"], r["time affected (µs)"]) for r in recs] == [
        ("bimodal", "b", 30.0),
        ("above roofline", "a", 10.0),
        ("bimodal", "a", 10.0),
    ]
    assert recs[0]["percent of total (%)"] == pytest.approx(30.0)
    assert recs[1]["detail"] == "2 of 2 instances above 100%; likely x"
    assert audit_totals(recs) == {"bimodal": (2, 40.0), "above roofline": (1, 10.0)}
    assert a.notes == [
        "bimodal: 2 row(s), 40.0 µs (40.0% of the time)",
        "above roofline: 1 row(s), 10.0 µs (10.0% of the time)",
    ]


def test_audit_lines_shorten_long_kernel_names():
    from pathlib import Path
    import perfreport
    from perfreport.writers.audit import NAME_WIDTH, audit_lines

    fix = Path(__file__).resolve().parents[2] / "fixtures" / "h100_qwen_0.5b.json.gz"
    lines = audit_lines(perfreport.analyze(fix))
    top = [ln for ln in lines if ln.startswith("coverage: top unmodelled ops:")]
    assert top
    # five names of at most NAME_WIDTH characters, each with its time and reason
    for part in top[0][len("coverage: top unmodelled ops: ") :].split("; "):
        name = part.rsplit(" µs (", 1)[0].rsplit(" ", 1)[0]
        assert len(name) <= NAME_WIDTH, name
    assert "…" in top[0]  # the 5x_cublas GEMM kernel name is longer than 100
