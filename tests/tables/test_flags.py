"""Row flags on hand-made trace fragments, with the arithmetic worked out by hand.

Spec H100 SXM: HBM 3.35 TB/s, LLC 52,428,800 B, host link 64 GB/s (see tests/tables/kit.py).
"""

from __future__ import annotations

import pytest

from perfreport.events import GpuEvent
from perfreport.tables import flags as fl
from tests.tables.kit import Trace, rows, tables, use_models


@pytest.fixture(autouse=True)
def _models(monkeypatch):
    use_models(monkeypatch)


# -- units --------------------------------------------------------------------------------


def test_bimodal_cut_hand_values():
    # n=4: each cluster needs max(2, ceil(0.4)) = 2; sorted 10 10 40 40: gap 40/10 = 4 >= 1.5
    assert fl.bimodal_cut([40, 10, 40, 10]) == 25.0
    assert fl.bimodal_cut([10, 11, 12, 13]) is None  # widest gap 12/11 < 1.5
    assert fl.bimodal_cut([10, 10, 10, 40]) is None  # one slow instance is an outlier
    assert fl.bimodal_cut([10, 40, 10]) is None  # under 4 instances
    # n=20: 2 per side minimum; 18 fast + 2 slow at 3x is bimodal, cut (10 + 30) / 2
    assert fl.bimodal_cut([10.0] * 18 + [30.0] * 2) == 20.0


def test_split_key():
    t = [10, 40, 10, 40]
    assert fl.split_key(t, [0, 1, 0, 1], [0, 1, 0, 1], 25)[0] == "kernels"
    assert fl.split_key(t, [0, 0, 0, 0], [0, 1, 0, 1], 25)[0] == "layer parity"
    assert fl.split_key([10, 10, 40, 40], [0, 0, 0, 0], [0, 1, 0, 1], 25) is None


def _G(uid, ts, dur, stream=7, dev=0):
    return GpuEvent(uid, f"k{uid}", "kernel", dev, stream, ts, dur, None)


def test_cross_stream_overlap_counts_only_the_overlapping_interval():
    ev = [
        _G(1, 0, 10),
        _G(2, 5, 10),  # stream 7: [0,10) and [5,15) overlap each other only
        _G(3, 8, 12, stream=8),  # stream 8: [8,20)
        _G(4, 20, 5, stream=8),  # [20,25): touches [8,20) on its own stream
        _G(5, 25, 5, stream=9),  # [25,30): touches [20,25) only
        _G(6, 0, 10, stream=7, dev=1),
        _G(7, 0, 10, stream=8, dev=2),
    ]  # other devices
    got = fl.cross_stream_overlap_us(ev)
    # 1: [0,10) ∩ [8,20) = 2; 2: [5,15) ∩ [8,20) = 7; 3: [8,20) ∩ ([0,10) ∪ [5,15)) = [8,15) = 7
    assert got == pytest.approx({1: 2.0, 2: 7.0, 3: 7.0})


def test_cross_stream_overlap_is_the_union_of_the_other_streams():
    ev = [
        _G(1, 100, 100),  # stream 7: [100,200)
        _G(2, 120, 10, stream=8),
        _G(3, 150, 10, stream=8),  # stream 8: [120,130), [150,160)
        _G(4, 125, 30, stream=9),
    ]  # stream 9: [125,155)
    got = fl.cross_stream_overlap_us(ev)
    # 1: union of the others [120,130) ∪ [125,155) ∪ [150,160) = [120,160) = 40 (not 10+30+10 = 50);
    # 2, 3, 4 lie wholly inside [100,200): their whole durations 10, 10, 30
    assert got == pytest.approx({1: 40.0, 2: 10.0, 3: 10.0, 4: 30.0})
    # absolute µs near 1.7e15 (Kineto without baseTimeNanoseconds): the same figures
    far = [_G(g.uid, g.ts + 1.7e15, g.dur, g.stream) for g in ev]
    assert fl.cross_stream_overlap_us(far) == pytest.approx({1: 40.0, 2: 10.0, 3: 10.0, 4: 30.0}, abs=0.5)


def _columns_tree(tmp_path, devices):
    from perfreport.pipeline import load_tree
    from tests.kit import X, write_trace

    ev = []
    spans = [(0, 10, 7), (5, 10, 7), (8, 12, 8), (20, 5, 8), (25, 5, 9), (3, 30, 9), (40, 2, 7)]
    for d in range(devices):
        for i, (t, du, st) in enumerate(spans):
            ev.append(X("kernel", f"k{i}", 1000 * d + t, du, pid=d, tid=st, device=d, stream=st, correlation=0))
    return load_tree(write_trace(tmp_path, ev))


@pytest.mark.parametrize("devices", [1, 3])
def test_cross_stream_overlap_from_the_columns_is_the_one_by_one_figure(tmp_path, devices):
    gpu = _columns_tree(tmp_path, devices).gpu
    records = [GpuEvent(g.uid, g.name, g.cat, g.device, g.stream, g.ts, g.dur, None) for g in gpu]
    got = fl.cross_stream_overlap_us(gpu)
    assert got and got == fl.cross_stream_overlap_us(records)
    assert list(got) == list(fl.cross_stream_overlap_us(records))  # the same order too


def test_overlap_rule():
    # 130% of roofline: measured 100 µs, roofline 130 µs, excess 30 µs: 30 µs of overlap covers it
    assert fl.overlap_explains(overlap_us=30.0, excess_us=30.0)
    assert not fl.overlap_explains(overlap_us=29.0, excess_us=30.0)
    assert not fl.overlap_explains(overlap_us=0.0, excess_us=0.0)


def test_is_host_copy():
    def M(name):
        return GpuEvent(0, name, "gpu_memcpy", 0, 7, 0, 1, None)

    assert fl.is_host_copy(M("Memcpy HtoD (Pageable -> Device)"))
    assert fl.is_host_copy(M("Memcpy DtoH (Device -> Pinned)"))
    assert not fl.is_host_copy(M("Memcpy DtoD (Device -> Device)"))


# -- above roofline: each cause ------------------------------------------------------------


def test_llc_cause(tmp_path):
    # 3.35e6 B / 3.35e12 B/s = 1.0 µs roofline; measured 0.5 µs -> 200%; 3.35 MB < 50 MiB LLC
    _, sh, _ = tables(tmp_path, Trace().op("t::fixed", 3.35e6, [("k", 100, 0.5)]))
    (r,) = rows(sh, "t::fixed")
    assert r["roofline time (µs)"] == pytest.approx(1.0)
    assert r["roofline mean (%)"] == pytest.approx(200.0)
    assert r["flags"].startswith("above roofline: 1 of 1 instances above 100%")
    assert "3.35 MB per call) fit in the 50 MiB last-level cache" in r["flags"]
    assert "sliding window" not in r["flags"]


def test_attention_cause_names_window(tmp_path):
    # 335e6 B / 3.35e12 = 100 µs; measured 50 µs -> 200%; 335 MB > LLC: only the attention cause
    _, sh, _ = tables(tmp_path, Trace().op("t::attn", 335e6, [("attn_kernel", 100, 50)]))
    (r,) = rows(sh, "t::attn")
    assert r["roofline mean (%)"] == pytest.approx(200.0)
    assert "sliding window, sparsity or KV-cache reuse" in r["flags"]
    assert "last-level cache" not in r["flags"]


def test_no_known_cause_is_model_inputs_suspect(tmp_path):
    # 335e6 B -> 100 µs; measured 50 µs -> 200%; 335 MB > LLC, not attention, no overlap, no
    # assumption: nothing can cover the 50 µs excess -> suspect, counted apart from modelled
    _, sh, cov = tables(tmp_path, Trace().op("t::fixed", 335e6, [("k", 100, 50)]))
    (r,) = rows(sh, "t::fixed")
    assert "model inputs suspect: no known cause covers the excess; check Fixed's bytes and FLOPs" in r["flags"]
    assert r["coverage"] == "model inputs suspect" and r["roofline mean (%)"] == pytest.approx(200.0)
    assert cov.modelled_us == 0.0 and cov.unmodelled_us["model inputs suspect"] == pytest.approx(50.0)
    assert "(of which model inputs suspect 100.0%)" in cov.headline()


def test_overlap_too_small_to_explain_is_no_cause(tmp_path):
    # t::fixed: 335e6 B / 3.35e12 B/s = 100 µs roofline; its kernel [100,150) = 50 µs -> 200%,
    # excess 100 - 50 = 50 µs. other's kernel [120,130) on stream 8 overlaps 10 µs of it (20%):
    # too little to cover 50 µs (the old rule charged all 50 µs as overlapped and blamed it)
    tr = Trace().op("t::fixed", 335e6, [("k", 100, 50)]).op("other", None, [("k2", 120, 10, 8)])
    _, sh, _ = tables(tmp_path, tr)
    (r,) = rows(sh, "t::fixed")
    assert "model inputs suspect: no known cause covers the excess" in r["flags"]
    assert (
        "(20% of the above-roofline time (10.0 of 50.0 µs) ran while other streams were busy: "
        "too little to cover the 50.0 µs excess)"
    ) in r["flags"]
    (o,) = rows(sh, "other")
    assert o["flags"] == ""  # unmodelled: no roofline, nothing to flag


def test_overlap_that_covers_the_excess_is_the_cause(tmp_path):
    # 2.01e8 B / 3.35e12 B/s = 60 µs roofline; kernel [100,150) = 50 µs -> 120%, excess 10 µs.
    # Other streams: [90,110) on 8 and [105,125) on 9; their union [90,125) meets [100,150) in
    # [100,125) = 25 µs (summing each intersection would give 10 + 20 = 30; the whole kernel, 50)
    tr = (
        Trace()
        .op("t::fixed", 2.01e8, [("k", 100, 50)])
        .op("a", None, [("ka", 90, 20, 8)])
        .op("b", None, [("kb", 105, 20, 9)])
    )
    _, sh, _ = tables(tmp_path, tr)
    (r,) = rows(sh, "t::fixed")
    assert r["roofline mean (%)"] == pytest.approx(120.0)
    assert (
        "likely 50% of the above-roofline time (25.0 of 50.0 µs) ran while other streams were "
        "busy, enough to cover the 10.0 µs by which it beats the roofline"
    ) in r["flags"]
    assert "suspect" not in r["flags"] and r["coverage"] == "modelled"


def test_same_stream_overlap_is_not_a_cross_stream_cause(tmp_path):
    # [100,150) and a kernel on the same stream 7 [120,130): stream time already counts it once
    tr = Trace().op("t::fixed", 335e6, [("k", 100, 50)]).op("other", None, [("k2", 120, 10)])
    _, sh, _ = tables(tmp_path, tr)
    (r,) = rows(sh, "t::fixed")
    assert "other streams" not in r["flags"] and "model inputs suspect" in r["flags"]


def test_host_copy_judged_on_host_link(tmp_path):
    # model: 128e6 B read + written; 64e6 B cross the link once: over 64 GB/s = 1000 µs;
    # measured 1250 µs -> 80% (against HBM it would read 128e6 / 3.35e12 = 38.2 µs -> 3.1%)
    _, sh, _ = tables(tmp_path, Trace().op("t::fixed", 128e6, [("Memcpy HtoD (Pageable -> Device)", 100, 1250)]))
    (r,) = rows(sh, "t::fixed")
    assert r["roofline time (µs)"] == pytest.approx(1000.0)
    assert r["roofline mean (%)"] == pytest.approx(80.0)
    assert r["bound"] == "host link"
    assert r["flags"] == (
        "host link: host<->device copy judged against the 64 GB/s host link, not HBM; bytes crossing "
        "it once: half the read + write bytes (no bytes recorded on the copies)"
    )
    # a device-to-device copy stays on HBM
    _, sh, _ = tables(tmp_path, Trace().op("t::fixed", 128e6, [("Memcpy DtoD (Device -> Device)", 100, 1250)]))
    (r,) = rows(sh, "t::fixed")
    assert r["roofline time (µs)"] == pytest.approx(128e6 / 3.35e12 * 1e6)
    assert r["bound"] == "memory" and r["flags"] == ""


def test_dtoh_copy_crosses_the_link_once_hand_worked(tmp_path):
    # issue 19: a 10.62 MB DtoH copy (Kineto records bytes = 10,620,000 on the memcpy); the copy
    # model charges read + write = 21.24 MB. Measured 227.6 µs. Host link 64 GB/s per direction:
    #   once:  10.62e6 / 64e9 = 165.94 µs -> 165.94 / 227.6 = 72.9%
    #   twice: 21.24e6 / 64e9 = 331.88 µs -> 145.8% (what main reported), flagged with the LLC
    k = ("Memcpy DtoH (Device -> Pinned)", 100, 227.6, 7, 10_620_000)
    _, sh, cov = tables(tmp_path, Trace().op("t::fixed", 21.24e6, [k]))
    (r,) = rows(sh, "t::fixed")
    assert r["data moved (MB)"] == pytest.approx(10.62)
    assert r["roofline time (µs)"] == pytest.approx(10.62e6 / 64e9 * 1e6)
    assert r["roofline mean (%)"] == pytest.approx(72.9, abs=0.05)
    assert r["bound"] == "host link" and "above roofline" not in r["flags"]
    assert "bytes crossing it once: the copies' recorded bytes" in r["flags"]


def test_host_copy_above_the_link_never_blames_the_llc(tmp_path):
    # 10.62 MB recorded, measured 100 µs: 165.94 / 100 = 166% of the link roofline. 10.62 MB fits
    # in the 50 MiB L2, but a cache cannot serve the host link: no LLC cause -> suspect
    k = ("Memcpy DtoH (Device -> Pinned)", 100, 100.0, 7, 10_620_000)
    _, sh, _ = tables(tmp_path, Trace().op("t::fixed", 21.24e6, [k]))
    (r,) = rows(sh, "t::fixed")
    assert r["roofline mean (%)"] == pytest.approx(165.94, abs=0.01)
    assert "last-level cache" not in r["flags"] and "model inputs suspect" in r["flags"]
    assert r["coverage"] == "model inputs suspect"


def test_llc_cannot_cover_a_compute_excess(tmp_path):
    # 3.35 MB (fits the L2) and 1.9788e12 FLOP at 989.4 TFLOP/s = 2000 µs compute term; measured
    # 1000 µs -> 200%, compute-bound: a cache hides memory time, not arithmetic -> suspect
    _, sh, cov = tables(tmp_path, Trace().op("t::gemm", 3.35e6, [("k", 100, 1000)], flops=1.9788e12))
    (r,) = rows(sh, "t::gemm")
    assert r["roofline time (µs)"] == pytest.approx(2000.0) and r["bound"] == "compute"
    assert "fit in the 50 MiB last-level cache, but its FLOPs alone need 200% of the time" in r["flags"]
    assert r["coverage"] == "model inputs suspect" and cov.modelled_us == 0.0
    # memory-bound with the operands in the L2: 3.35e6 B -> 1 µs, 989.4e3 FLOP -> 1 ns; measured
    # 0.5 µs -> 200%, compute term alone 0.2%: the cache covers it, the row stays modelled
    _, sh, cov = tables(tmp_path, Trace().op("t::gemm", 3.35e6, [("k", 100, 0.5)], flops=989.4e3))
    (r,) = rows(sh, "t::gemm")
    assert "hits beat the HBM roofline" in r["flags"] and r["coverage"] == "modelled"


def test_attention_window_ruled_out_is_suspect(tmp_path, monkeypatch):
    # the attention cause is named only while the window is unknown: an attention model that
    # knows the layer is full attention (window_ruled_out) at 200% has no cause left
    from tests.tables import kit

    monkeypatch.setattr(kit.Attn, "window_ruled_out", True, raising=False)
    _, sh, _ = tables(tmp_path, Trace().op("t::attn", 335e6, [("attn_kernel", 100, 50)]))
    (r,) = rows(sh, "t::attn")
    assert "sliding window" not in r["flags"] and r["coverage"] == "model inputs suspect"


def test_assumption_bound_still_above_is_suspect(tmp_path):
    # point 335e6 B -> 100 µs; lower bound 167.5e6 B -> 50 µs; measured 40 µs: 125% even at the
    # lower bound: the assumption cannot cover it
    _, sh, _ = tables(tmp_path, Trace().op("t::experts", 335e6, [("k", 100, 40)]))
    (r,) = rows(sh, "t::experts")
    assert "still 125% at the assumption's lower bound" in r["flags"]
    assert r["coverage"] == "model inputs suspect"


# -- assumptions and the roofline range ------------------------------------------------------


def test_assumption_range_and_flag(tmp_path):
    # point 335e6 B -> 100 µs; bounds 167.5e6 B -> 50 µs and 670e6 B -> 200 µs; measured 80 µs:
    # point 125% (above), range 62.5% ... 250%: within roofline at the lower bound
    _, sh, _ = tables(tmp_path, Trace().op("t::experts", 335e6, [("k", 100, 80)]))
    (r,) = rows(sh, "t::experts")
    assert r["roofline time (µs)"] == pytest.approx(100.0)
    assert (r["roofline time min (µs)"], r["roofline time max (µs)"]) == (pytest.approx(50.0), pytest.approx(200.0))
    assert (r["roofline % min"], r["roofline % max"]) == (pytest.approx(62.5), pytest.approx(250.0))
    assert r["roofline mean (%)"] == pytest.approx(125.0)
    assert "within roofline at the assumption's lower bound (62%)" in r["flags"]
    assert "assumption: experts touched: 8 expected (bounds 4 … 16)" in r["flags"]


def test_no_assumption_equal_bounds(tmp_path):
    # 335e6 B -> 100 µs; measured 200 µs -> 50%; no unknown: min = max = point
    _, sh, _ = tables(tmp_path, Trace().op("t::fixed", 335e6, [("k", 100, 200)]))
    (r,) = rows(sh, "t::fixed")
    assert r["roofline time min (µs)"] == r["roofline time max (µs)"] == r["roofline time (µs)"]
    assert r["roofline % min"] == r["roofline % max"] == pytest.approx(50.0)
    assert r["flags"] == ""
    assert "flags" in sh["test"].columns and "roofline % max" in sh["test"].columns


# -- bimodal rows ------------------------------------------------------------------------------


def _alternating(kernels):
    tr = Trace()
    for i, (k, d) in enumerate(kernels):
        tr.op("t::fixed", 335e6, [(k, 1000 + 1000 * i, d)])
    return tr


def test_bimodal_split_by_kernels(tmp_path):
    # layers alternate a 150 µs and a 600 µs kernel: two rows of 2; 335e6 B -> 100 µs roofline
    _, sh, cov = tables(tmp_path, _alternating([("fast", 150), ("slow", 600)] * 2))
    rs = sorted(rows(sh, "t::fixed"), key=lambda r: r["time mean (µs)"])
    assert [(r["count"], r["time mean (µs)"]) for r in rs] == [(2, 150.0), (2, 600.0)]
    assert "split by kernels: this part is kernels fast: 2 of 4 instances" in rs[0]["flags"]
    assert "split by kernels: this part is kernels slow" in rs[1]["flags"]
    assert rs[0]["roofline mean (%)"] == pytest.approx(100 / 150 * 100)
    assert rs[0]["kernels"].startswith("fast [stream 7] x2")
    assert cov.total_us == pytest.approx(1500.0) and cov.modelled_us == pytest.approx(1500.0)


def test_bimodal_split_by_layer_parity(tmp_path):
    _, sh, _ = tables(tmp_path, _alternating([("k", 150), ("k", 600)] * 2))
    rs = sorted(rows(sh, "t::fixed"), key=lambda r: r["time mean (µs)"])
    assert [r["count"] for r in rs] == [2, 2]
    assert "split by layer parity: this part is the even instances" in rs[0]["flags"]
    assert "the odd instances" in rs[1]["flags"]


def test_bimodal_flag_without_split(tmp_path):
    _, sh, _ = tables(tmp_path, _alternating([("k", 150), ("k", 150), ("k", 600), ("k", 600)]))
    (r,) = rows(sh, "t::fixed")
    assert r["count"] == 4
    assert r["flags"] == (
        "bimodal: 2 instances near 150 µs and 2 near 600 µs; no kernel list or layer parity separates them"
    )


def test_inference_attention_knows_when_the_window_is_ruled_out():
    # the attention cause of an above-roofline row needs an unknown window: a config that gives the
    # layer's window (0 = full attention, 128 = sliding) rules it out; no config leaves it open
    from perfreport.models.attention.engine_ops import VllmUnifiedAttention
    from perfreport.stats.iteration_formats import parse_iteration
    from tests.kit import cpu_op

    ann = parse_iteration("execute_32_context_0(sq0sk0sqsq0sqsk0)_generation_32(sq32sk55086sqsq32sqsk55086)")
    dims = [[32, 64, 64], [32, 8, 64], [32, 8, 64], [32, 64, 64], [], [], [], [0]]
    types = ["c10::BFloat16"] * 4 + ["", "", "", "c10::BFloat16"]

    def _unified(meta):
        op = cpu_op("vllm::unified_attention_with_output", dims, types, None, {"iteration": ann, **meta})
        return VllmUnifiedAttention(op)

    assert _unified({"layer_index": 3, "sliding_window": 0}).window_ruled_out is True
    assert _unified({"layer_index": 0, "sliding_window": 128}).window_ruled_out is True
    assert _unified({}).window_ruled_out is False
