"""diff/match.py: rows matched rule by rule (name+shapes+dtypes, name+category, kernel name); every
row in exactly one match; groups summed."""

from __future__ import annotations

from perfreport.diff.match import RULES, Group, kernel_names, match_rows
from perfreport.tables import columns as C


def row(name, dims="", types="", cat="gemm", t=10.0, n=1, kernels="", roof=None):
    return {
        C.NAME: name,
        C.INPUT_DIMS: dims,
        C.INPUT_TYPES: types,
        C.CATEGORY: cat,
        C.TIME_SUM_US: t,
        C.COUNT: n,
        C.KERNELS: kernels,
        C.ROOFLINE_MEAN_PCT: roof,
    }


def test_kernel_names_drop_the_stream_and_count():
    assert kernel_names("gemm_a [stream 7] x3, mean 2.0 µs; copy [stream 9] x1, mean 1.0 µs") == {"gemm_a", "copy"}
    assert kernel_names("") == frozenset() and kernel_names(None) == frozenset()
    assert kernel_names("bare") == {"bare"}


def test_group_sums_time_and_count_and_weights_roofline_by_calls():
    g = Group([row("mm", t=10.0, n=1, roof=50.0), row("mm", t=30.0, n=3, roof=90.0), row("mm", t="", n="")])
    assert (g.time, g.count) == (40.0, 4)
    assert g.roofline == 80.0  # (50*1 + 90*3) / 4
    assert g.first(C.NAME) == "mm"
    assert Group([row("a"), row("b")]).first(C.NAME) == "(several)"
    assert Group([row("a")]).roofline is None


def test_rules_in_order_and_leftovers():
    a = [
        row("aten::mm", "(4, 8)", "float", t=10.0),
        row("aten::mm", "(4, 8)", "float", t=5.0),  # same key: summed with the row above
        row("aten::add", "(4,)", "float", cat="elementwise", t=3.0),
        row("old_name", kernels="k_fused [stream 7] x1, mean 2.0 µs", cat="other", t=2.0),
        row("aten::gone", t=1.0),
    ]
    b = [
        row("aten::mm", "(4, 8)", "float", t=12.0),
        row("aten::add", "(8,)", "half", cat="elementwise", t=4.0),  # shapes changed: name+category
        row("new_name", kernels="k_fused [stream 9] x2, mean 1.0 µs", cat="fused", t=2.5),  # renamed
        row("aten::new", t=7.0),
    ]
    ms = match_rows(a, b)
    got = [(m.rule, m.a and m.a.time, m.b and m.b.time) for m in ms]
    assert got == [
        (RULES[0], 15.0, 12.0),
        (RULES[1], 3.0, 4.0),
        (RULES[2], 2.0, 2.5),
        ("vanished", 1.0, None),
        ("appeared", None, 7.0),
    ]
    seen_a = [id(r) for m in ms if m.a for r in m.a.rows]
    seen_b = [id(r) for m in ms if m.b for r in m.b.rows]
    assert sorted(seen_a) == sorted(map(id, a)) and sorted(seen_b) == sorted(map(id, b))
