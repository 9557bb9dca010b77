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
    assert fl.bimodal_cut([10, 11, 12, 13]) is None          # widest gap 12/11 < 1.5
    assert fl.bimodal_cut([10, 10, 10, 40]) is None          # one slow instance is an outlier
    assert fl.bimodal_cut([10, 40, 10]) is None              # under 4 instances
    # n=20: 2 per side minimum; 18 fast + 2 slow at 3x is bimodal, cut (10 + 30) / 2
    assert fl.bimodal_cut([10.0] * 18 + [30.0] * 2) == 20.0


def test_split_key():
    t = [10, 40, 10, 40]
    assert fl.split_key(t, [0, 1, 0, 1], [0, 1, 0, 1], 25)[0] == "kernels"
    assert fl.split_key(t, [0, 0, 0, 0], [0, 1, 0, 1], 25)[0] == "layer parity"
    assert fl.split_key([10, 10, 40, 40], [0, 0, 0, 0], [0, 1, 0, 1], 25) is None


def test_overlapped_uids():
    def G(uid, ts, dur, dev=0):
        return GpuEvent(uid, f"k{uid}", "kernel", dev, 7, ts, dur, None)
    # [0,10) and [5,15) overlap; [15,20) only touches; [30,40) on device 1 overlaps nothing there
    ev = [G(1, 0, 10), G(2, 5, 10), G(3, 15, 5), G(4, 30, 10, dev=1), G(5, 100, 1, dev=1)]
    assert fl.overlapped_uids(ev) == {1, 2}


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
    r, = rows(sh, "t::fixed")
    assert r["roofline time (µs)"] == pytest.approx(1.0)
    assert r["roofline mean (%)"] == pytest.approx(200.0)
    assert r["flags"].startswith("above roofline: 1 of 1 instances above 100%")
    assert "3.35 MB per call) fit in the 50 MiB last-level cache" in r["flags"]
    assert "sliding window" not in r["flags"]


def test_attention_cause_names_window(tmp_path):
    # 335e6 B / 3.35e12 = 100 µs; measured 50 µs -> 200%; 335 MB > LLC: only the attention cause
    _, sh, _ = tables(tmp_path, Trace().op("t::attn", 335e6, [("attn_kernel", 100, 50)]))
    r, = rows(sh, "t::attn")
    assert r["roofline mean (%)"] == pytest.approx(200.0)
    assert "sliding window, sparsity or KV-cache reuse" in r["flags"]
    assert "last-level cache" not in r["flags"]


def test_no_known_cause_still_flags(tmp_path):
    _, sh, _ = tables(tmp_path, Trace().op("t::fixed", 335e6, [("k", 100, 50)]))
    r, = rows(sh, "t::fixed")
    assert "no known cause: check Fixed's bytes and FLOPs" in r["flags"]


def test_overlapping_kernels_cause(tmp_path):
    # t::fixed's kernel [100,150) overlaps other's [120,130) on stream 8: all 50 µs of it counts
    tr = Trace().op("t::fixed", 335e6, [("k", 100, 50)]).op("other", None, [("k2", 120, 10, 8)])
    _, sh, _ = tables(tmp_path, tr)
    r, = rows(sh, "t::fixed")
    assert "100% of its kernel time is in kernels overlapping other GPU work" in r["flags"]
    o, = rows(sh, "other")
    assert o["flags"] == ""             # unmodelled: no roofline, nothing to flag


def test_host_copy_judged_on_host_link(tmp_path):
    # 64e6 B over the 64 GB/s host link = 1000 µs; measured 1250 µs -> 80%
    # (against HBM it would read 64e6 / 3.35e12 = 19.1 µs -> 1.5%)
    _, sh, _ = tables(tmp_path, Trace().op("t::fixed", 64e6, [("Memcpy HtoD (Pageable -> Device)", 100, 1250)]))
    r, = rows(sh, "t::fixed")
    assert r["roofline time (µs)"] == pytest.approx(1000.0)
    assert r["roofline mean (%)"] == pytest.approx(80.0)
    assert r["bound"] == "host link"
    assert r["flags"] == "host link: host<->device copy judged against the 64 GB/s host link, not HBM"
    # a device-to-device copy stays on HBM
    _, sh, _ = tables(tmp_path, Trace().op("t::fixed", 64e6, [("Memcpy DtoD (Device -> Device)", 100, 1250)]))
    r, = rows(sh, "t::fixed")
    assert r["roofline time (µs)"] == pytest.approx(64e6 / 3.35e12 * 1e6)
    assert r["bound"] == "memory" and r["flags"] == ""


# -- assumptions and the roofline range ------------------------------------------------------

def test_assumption_range_and_flag(tmp_path):
    # point 335e6 B -> 100 µs; bounds 167.5e6 B -> 50 µs and 670e6 B -> 200 µs; measured 80 µs:
    # point 125% (above), range 62.5% ... 250%: within roofline at the lower bound
    _, sh, _ = tables(tmp_path, Trace().op("t::experts", 335e6, [("k", 100, 80)]))
    r, = rows(sh, "t::experts")
    assert r["roofline time (µs)"] == pytest.approx(100.0)
    assert (r["roofline time min (µs)"], r["roofline time max (µs)"]) == (pytest.approx(50.0), pytest.approx(200.0))
    assert (r["roofline % min"], r["roofline % max"]) == (pytest.approx(62.5), pytest.approx(250.0))
    assert r["roofline mean (%)"] == pytest.approx(125.0)
    assert "within roofline at the assumption's lower bound (62%)" in r["flags"]
    assert "assumption: experts touched: 8 expected (bounds 4 … 16)" in r["flags"]


def test_no_assumption_equal_bounds(tmp_path):
    # 335e6 B -> 100 µs; measured 200 µs -> 50%; no unknown: min = max = point
    _, sh, _ = tables(tmp_path, Trace().op("t::fixed", 335e6, [("k", 100, 200)]))
    r, = rows(sh, "t::fixed")
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
    r, = rows(sh, "t::fixed")
    assert r["count"] == 4
    assert r["flags"] == ("bimodal: 2 instances near 150 µs and 2 near 600 µs; "
                          "no kernel list or layer parity separates them")
