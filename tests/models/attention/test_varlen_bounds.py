"""Bounds on a varlen batch's (q, k) pairs when only the totals and max_seqlen are recorded
(models/attention/varlen_bounds.py): hand-worked values, every integer split of small batches checked
against the bounds, and the varlen attention rows that carry them as an assumption."""

import json
from itertools import product
from types import SimpleNamespace

import pytest

from perfreport.models.attention import sdpa
from perfreport.models.base import bounds
from perfreport.models.attention.varlen_bounds import concentrated, pair_bounds, paired_sum

BF16 = "c10::BFloat16"


def test_concentrated_split():
    # 30 tokens over 3 sequences of at most 12: 12 + 12 + 6; 60 over 3 of at most 25: 25 + 25 + 10
    assert concentrated(3, 30, 12) == [(2, 12), (1, 6)]
    assert concentrated(3, 60, 25) == [(2, 25), (1, 10)]
    assert concentrated(3, 30, None) == [(1, 28), (2, 1)]  # no max: 30 − 2·1 = 28
    assert concentrated(3, 30, 10) == [(3, 10)]  # 3·10 = 30: all equal
    assert concentrated(4, 2, 2) == [(1, 2), (3, 0)]  # fewer tokens than sequences
    assert paired_sum([(2, 12), (1, 6)], [(2, 25), (1, 10)]) == 12 * 25 * 2 + 6 * 10 == 660


def test_hand_worked_bounds():
    # 3 sequences, Q 30, K 60, max_seqlen 12 / 25: q^c = (12, 12, 6), k^c = (25, 25, 10)
    # not causal: max Σqk = 12·25 + 12·25 + 6·10 = 660, min (q ascending) = 6·25 + 12·25
    # + 12·10 = 570; the mean-length figure 3·10·20 = 600 lies inside
    assert pair_bounds(3, 30, 60, 12, 25, False, "bottom_right") == (570, 660)
    # bottom-right causal: hi = 660 − 30²/(2·3) = 660 − 150 = 510; lo = max(570 − (144 + 144
    # + 36)/2, (60 − 30)·1 + 150) = max(408, 180) = 408; mean 3·(10·20 − 10²/2) = 450
    assert pair_bounds(3, 30, 60, 12, 25, True, "bottom_right") == (408, 510)
    # top-left causal (q ≤ k: q²/2 each): [900/6, 324/2] = [150, 162]; mean 3·50 = 150
    assert pair_bounds(3, 30, 60, 12, 25, True, "top_left") == (150, 162)
    # equal lengths (max_seqlen·n = totals: every sequence 10 / 20): one value, the mean's
    assert pair_bounds(3, 30, 60, 10, 20, True, "bottom_right") == (450, 450)
    assert pair_bounds(3, 30, 60, 10, 20, False, "bottom_right") == (600, 600)
    # no max_seqlen: q^c = (28, 1, 1), k^c = (58, 1, 1): hi = 28·58 + 2 − 150 = 1476,
    # lo = max(87 − 786/2, 30 + 150) = 180
    assert pair_bounds(3, 30, 60, None, None, True, "bottom_right") == (180, 1476)


def _pairs(q, k, causal, align):
    return sum(sdpa.causal_pairs(a, b, align) if causal else a * b for a, b in zip(q, k))


def _splits(n, total, m):
    return [s for s in product(range(1, m + 1), repeat=n) if sum(s) == total]


@pytest.mark.parametrize("causal,align", [(False, "bottom_right"), (True, "bottom_right"), (True, "top_left")])
def test_every_split_lies_within_the_bounds(causal, align):
    """n 3, Q 9 (max 5), K 15 (max 8): every integer split (causal: with q_i ≤ k_i)."""
    lo, hi = pair_bounds(3, 9, 15, 5, 8, causal, align)
    seen = [
        _pairs(q, k, causal, align)
        for q in _splits(3, 9, 5)
        for k in _splits(3, 15, 8)
        if not causal or all(a <= b for a, b in zip(q, k))
    ]
    assert len(seen) > 100 and lo <= min(seen) and max(seen) <= hi
    if not causal:  # the bilinear extremes are attained exactly
        assert (min(seen), max(seen)) == (lo, hi)


def _varlen_op(causal, max_q="12", max_k="25"):
    dims = [[30, 4, 32], [60, 4, 32], [60, 4, 32], [4], [4]] + [[]] * 7
    return SimpleNamespace(
        name="flash_attn::_flash_attn_varlen_forward",
        perf_meta={},
        args={
            "Input Dims": dims,
            "Input type": [BF16] * 3 + ["int", "int"] + ["Scalar"] * 7,
            "Input Strides": [[]] * 12,
            "Concrete Inputs": ["", "", "", "", "", max_q, max_k, "0.0", "", causal, "-1", "-1"],
        },
    )


def test_mean_length_row_carries_the_range():
    m = sdpa.FlashAttnVarlenForward(_varlen_op("True"))
    # point: mean 10 / 20, bottom-right 10·20 − 50 = 150 per sequence, 450 pairs:
    # 2·4·450·(32 + 32) = 230,400 FLOPs; bounds 408 … 510 pairs -> 208,896 … 261,120
    assert m.flops() == 230_400 and m.params()["lengths"] == "mean"
    (a,) = m.assumptions()
    assert (a.flops_min, a.flops_max) == (2 * 4 * 408 * 64, 2 * 4 * 510 * 64) == (208_896, 261_120)
    assert a.bytes_min == a.bytes_max == m.bytes()  # Q + K + V + O are exact
    assert "450 (q, k) pairs, bounds 408 … 510" in a.text and "max_seqlen 12/25" in a.text
    assert bounds(m, m.flops(), m.bytes())[:2] == (208_896, 261_120)
    # equal lengths recorded (max 10 / 20): the range collapses to the point figure
    (e,) = sdpa.FlashAttnVarlenForward(_varlen_op("True", "10", "20")).assumptions()
    assert e.flops_min == e.flops_max == 230_400


def test_backward_and_window():
    dims = [
        [30, 4, 32],
        [30, 4, 32],
        [60, 4, 32],
        [60, 4, 32],
        [30, 4, 32],
        [4, 30],
        [30, 4, 32],
        [60, 4, 32],
        [60, 4, 32],
        [4],
        [4],
    ] + [[]] * 9
    ci = [""] * 11 + ["12", "25", "", "", "False", "-1", "-1", "", ""]
    b = sdpa.FlashAttnVarlenBackward(
        SimpleNamespace(
            name="flash_attn::_flash_attn_varlen_backward",
            perf_meta={},
            args={
                "Input Dims": dims,
                "Input type": [BF16] * 9 + ["int", "int"] + ["Scalar"] * 9,
                "Input Strides": [[]] * 20,
                "Concrete Inputs": ci,
            },
        )
    )
    (a,) = b.assumptions()  # not causal: 570 … 660 pairs, 2.5 × 2·4·64 per pair
    assert (a.flops_min, a.flops_max) == (2.5 * 512 * 570, 2.5 * 512 * 660)
    w = _varlen_op("True")
    w.args["Concrete Inputs"][10] = "3"  # window_size_left 3: W = 4
    (aw,) = sdpa.FlashAttnVarlenForward(w).assumptions()
    # hi = min(510, 30·4) = 120 = the point min(450, 120); lo = min(408, 30) = 30
    assert (aw.flops_min, aw.flops_max) == (512 * 30, 512 * 120)


def test_analyzed_row_shows_the_range(tmp_path):
    """2 sequences, 4096 query and 4096 key tokens, max_seqlen 4000, not causal, H 4, d 32."""
    from perfreport.pipeline import analyze
    from perfreport.specs import load_arch, roofline

    dims = [[4096, 4, 32], [4096, 4, 32], [4096, 4, 32], [3], [3]] + [[]] * 7
    args = {
        "Input Dims": dims,
        "Input type": [BF16] * 3 + ["int", "int"] + ["Scalar"] * 7,
        "Input Strides": [[]] * 12,
        "Concrete Inputs": ["", "", "", "", "", "4000", "4000", "0.0", "", "False", "-1", "-1"],
    }
    ev = {
        "ph": "X",
        "cat": "cpu_op",
        "name": "flash_attn::_flash_attn_varlen_forward",
        "pid": 1,
        "tid": 1,
        "ts": 0.0,
        "dur": 50.0,
        "args": args,
    }
    p = tmp_path / "varlen.json"
    p.write_text(json.dumps({"traceEvents": [ev]}))
    (r,) = analyze(str(p), arch="h100_sxm").sheet("SDPA_fwd").records()
    # mean 2048 / 2048: 2·2048·2048 = 8,388,608 pairs; split (4000, 96) x (4000, 96):
    # max 4000² + 96² = 16,009,216, min 2·4000·96 = 768,000; 2·4·64 = 512 FLOPs per pair
    # bytes Q + K + V + O = 4 · 4096·4·32·2 = 4,194,304
    spec, nbytes = load_arch("h100_sxm"), 4 * 4096 * 4 * 32 * 2
    assert r["GFLOP"] == pytest.approx(512 * 8_388_608e-9)
    assert r["roofline time min (µs)"] == pytest.approx(roofline(spec, 512 * 768_000, nbytes, "matrix_bf16")[0])
    assert r["roofline time max (µs)"] == pytest.approx(roofline(spec, 512 * 16_009_216, nbytes, "matrix_bf16")[0])
    assert r["roofline time min (µs)"] < r["roofline time (µs)"] < r["roofline time max (µs)"]
    assert r["roofline % min"] < r["roofline % max"]
    assert "assumption: sequence lengths: mean 2048 query / 2048 key tokens" in r["flags"]
