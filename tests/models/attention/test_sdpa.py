"""Attention models: hand values (GQA, Dk != Dv, causal alignments, backward, varlen, fp32)
and the reference SDPA rows."""

import ast
import csv
from pathlib import Path
from types import SimpleNamespace

import pytest

from perfreport.errors import ModelError
from perfreport.models.attention import sdpa
from perfreport.models.registry import model_for
from tests.kit import fake_op

BF16 = "c10::BFloat16"


op = fake_op


def flash(q, k, v, causal="False", dtype=BF16):
    return op(
        "aten::_scaled_dot_product_flash_attention",
        [q, k, v, [], [], [], []],
        [dtype] * 3 + ["Scalar"] * 4,
        ["", "", "", "0.", causal, "False", ""],
    )


def test_gqa_and_dk_ne_dv():
    # B=2, H_Q=8, H_KV=2, N_Q=N_KV=16, d_qk=192, d_v=128, not causal
    m = sdpa.SdpaFlash(flash([2, 8, 16, 192], [2, 2, 16, 192], [2, 2, 16, 128]))
    p = m.params()
    assert (p["H_Q"], p["H_KV"], p["d_h_qk"], p["d_h_v"]) == (8, 2, 192, 128)
    # 2·B·H_Q·N_Q·N_KV·(d_qk + d_v) = 2·2·8·16·16·320 = 2621440
    assert m.flops() == 2621440
    # Q 2·8·16·192 = 49152, K 2·2·16·192 = 12288, V 2·2·16·128 = 8192,
    # O 2·8·16·128 = 32768 -> 102400 elements ·2 B = 204800
    assert m.bytes() == 204800
    assert m.category == "SDPA_fwd" and m.compute_spec() == "matrix_bf16"


def test_causal_square_halves():
    full = sdpa.SdpaFlash(flash([1, 4, 64, 64], [1, 4, 64, 64], [1, 4, 64, 64]))
    causal = sdpa.SdpaFlash(flash([1, 4, 64, 64], [1, 4, 64, 64], [1, 4, 64, 64], "True"))
    # N_Q == N_KV: exactly half (continuous N²/2 convention): 2·4·64·64·128/2 = 2097152
    assert causal.flops() == full.flops() / 2 == 2097152


def test_causal_alignment_when_nq_lt_nkv():
    # N_Q = 4, N_KV = 16, H = 1, d = 8 + 8
    tl = sdpa.SdpaFlash(flash([1, 1, 4, 8], [1, 1, 16, 8], [1, 1, 16, 8], "True"))
    # top-left (torch SDPA): P = N_Q²/2 = 8 -> 2·1·1·8·16 = 256
    assert tl.flops() == 256
    br = sdpa.FlashAttnForward(
        op(
            "flash_attn::_flash_attn_forward",
            [[1, 4, 1, 8], [1, 16, 1, 8], [1, 16, 1, 8]] + [[]] * 8,
            [BF16] * 3 + ["Scalar"] * 8,
            ["", "", "", "0.0", "0.35", "True", "-1", "-1", "0.0", "", "False"],
        )
    )
    # bottom-right (flash-attn): P = N_Q·N_KV − N_Q²/2 = 64 − 8 = 56 -> 2·56·16 = 1792
    assert br.flops() == 1792


def test_decode_causal_bottom_right_keeps_all_keys():
    m = sdpa.FlashAttnForward(
        op(
            "flash_attn::_flash_attn_forward",
            [[4, 1, 8, 64], [4, 100, 8, 64], [4, 100, 8, 64]] + [[]] * 8,
            [BF16] * 3 + ["Scalar"] * 8,
            ["", "", "", "0.0", "", "True", "-1", "-1", "0.0", "", "False"],
        )
    )
    # P = 1·100 − 1/2 = 99.5 -> 2·4·8·99.5·128 = 815104
    assert m.flops() == 815104


def test_backward_is_2_5x_forward():
    fwd = sdpa.SdpaFlash(flash([2, 4, 32, 64], [2, 4, 32, 64], [2, 4, 32, 64], "True"))
    dims = [[2, 4, 32, 64]] * 5 + [[2, 4, 32]] + [[]] * 9
    b = sdpa.SdpaFlashBackward(
        op(
            "aten::_scaled_dot_product_flash_attention_backward",
            dims,
            [BF16] * 5 + ["float"] + ["Scalar"] * 9,
            [""] * 10 + ["0.", "True", "", "", ""],
        )
    )
    assert b.flops() == 2.5 * fwd.flops()
    # reads Q,K,V,O,dO and writes dQ,dK,dV: 8 tensors of 2·4·32·64·2 B = 32768 -> 262144
    assert b.bytes() == 262144 and b.category == "SDPA_bwd"


def test_fp32_bytes_use_actual_dtype():
    # The reference tool assumes 2 bytes/element; fp32 attention moves 4.
    m = sdpa.SdpaFlash(flash([1, 2, 8, 16], [1, 2, 8, 16], [1, 2, 8, 16], dtype="float"))
    # 4 tensors · 1·2·8·16 = 256 elements · 4 B = 4096 (the 2-byte rule would give 2048)
    assert m.bytes() == 4096 and m.precision() == "fp32"


def test_varlen_estimate():
    # 3 sequences, 30 query tokens, 60 key tokens in total; H 4, d 32; not causal
    m = sdpa.FlashAttnVarlenForward(
        op(
            "flash_attn::_flash_attn_varlen_forward",
            [[30, 4, 32], [60, 4, 32], [60, 4, 32], [4], [4]] + [[]] * 7,
            [BF16] * 3 + ["int", "int"] + ["Scalar"] * 7,
            ["", "", "", "", "", "12", "25", "0.0", "", "False", "-1", "-1"],
        )
    )
    # mean lengths N_Q = 10, N_KV = 20: 2·3·4·10·20·64 = 307200
    assert (m.B, m.N_Q, m.N_KV) == (3, 10, 20) and m.flops() == 307200


# the batch of test_varlen_on_chunk_statistics_and_fallback: 3 sequences (cu_seqlens [3 + 1]) of
# 5, 10, 15 new tokens on 5, 20, 35 keys: total_q 5 + 10 + 15 = 30, total_k 5 + 20 + 35 = 60,
# max_seqlen_q max(5, 10, 15) = 15, max_seqlen_k max(5, 20, 35) = 35 (Concrete Inputs 5 and 6)
VARLEN_DIMS = [[30, 4, 32], [60, 4, 32], [60, 4, 32], [4], [4]] + [[]] * 7
VARLEN_CI = ["", "", "", "", "", "15", "35", "0.0", "", "True", "-1", "-1"]


def _with_stats(o, ann):
    from perfreport.stats.iteration_formats import parse_iteration

    o.perf_meta["iteration"] = parse_iteration(ann)
    return o


def test_varlen_on_chunk_statistics_and_fallback():
    # 3 prefill sequences of 5, 10, 15 new tokens on 5, 20, 35 keys (30 q, 60 k tokens):
    # sqsq 25 + 100 + 225 = 350, sqsk 25 + 200 + 525 = 750; causal P = 750 - 175 = 575
    # FLOPs = 2*4*575*(32 + 32) = 294,400 forward, 2.5x = 736,000 backward
    ann = "execute_30_context_3(sq30sk60sqsq350sqsk750)_generation_0(sq0sk0sqsq0sqsk0)"
    types = [BF16] * 3 + ["int", "int"] + ["Scalar"] * 7
    m = sdpa.FlashAttnVarlenForward(
        _with_stats(op("flash_attn::_flash_attn_varlen_forward", VARLEN_DIMS, types, VARLEN_CI), ann)
    )
    assert m.flops() == 294_400 and m.params()["lengths"] == "chunk statistics"
    bdims = [
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
    bci = [""] * 11 + ["15", "35", "", ""] + ["True", "-1", "-1", "", ""]  # max_seqlen at 11, 12
    b = sdpa.FlashAttnVarlenBackward(
        _with_stats(
            op("flash_attn::_flash_attn_varlen_backward", bdims, [BF16] * 9 + ["int", "int"] + ["Scalar"] * 9, bci), ann
        )
    )
    assert b.causal and b.flops() == 736_000
    # annotation of another batch (sq 31 != 30 tokens): the mean-length estimate, marked
    other = "execute_31_context_3(sq31sk60sqsq351sqsk751)_generation_0(sq0sk0sqsq0sqsk0)"
    f = sdpa.FlashAttnVarlenForward(
        _with_stats(op("flash_attn::_flash_attn_varlen_forward", VARLEN_DIMS, types, VARLEN_CI), other)
    )
    # B 3, N_Q 10, N_KV 20, bottom-right causal 10*20 - 50 = 150: 2*3*4*150*64 = 230,400
    assert f.flops() == 230_400 and f.params()["lengths"] == "mean"
    # its bounds (every split of 30 / 60 tokens with max_seqlen 15 / 35) hold the true split's
    # 294,400; max_seqlen 12 / 25 (no sequence of 15 / 35) would give 408 … 510 pairs, not 575
    (a,) = f.assumptions()
    assert "max_seqlen 15/35" in a.text and a.flops_min <= 294_400 <= a.flops_max


def test_inconsistent_heads_raise():
    with pytest.raises(ModelError):
        sdpa.SdpaFlash(flash([1, 6, 8, 16], [1, 4, 8, 16], [1, 4, 8, 16]))


REF = Path(__file__).parents[2] / "data" / "reference_gemm_sdpa.csv"


def sdpa_rows():
    with open(REF, newline="") as f:
        rows = csv.DictReader(line for line in f if not line.startswith("#"))
        return [r for r in rows if "SDPA" in r["source"]]


@pytest.mark.parametrize("row", sdpa_rows(), ids=lambda r: r["source"].split("/")[0])
def test_reference_sdpa(row):
    # literal_eval on the reference tool's CSV cells (test only; never on trace content)
    args = {
        k: ast.literal_eval(row[k + "_first"]) for k in ("Input Dims", "Input type", "Input Strides", "Concrete Inputs")
    }
    m = model_for(row["name"])(SimpleNamespace(name=row["name"], args=args, perf_meta={}))
    assert m.flops() / 1e9 == pytest.approx(float(row["GFLOPS_first"]), rel=1e-12)
    # bf16 here, so their 2-bytes-per-element rule happens to be right: MiB -> bytes
    assert m.bytes() == pytest.approx(float(row["Data Moved (MB)_first"]) * 2**20, rel=1e-12)
