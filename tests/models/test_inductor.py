"""Inductor Triton kernel models on cpu_ops recorded as Inductor's launcher records them."""

import pytest

from perfreport.errors import ModelError
from perfreport.models.inductor import InductorKernel
from tests.models.serving_ops import model


def test_pointwise_fused_ops():
    m = model("inductor", "triton_poi_fused_add_mul_0")
    assert m.category == "Inductor" and m.params()["fused_ops"] == "add mul"
    # a [16,32] bf16 1024 B + bias [32] 64 B + out [16,32] 1024 B; 2 ops · xnumel 512
    assert (m.flops(), m.bytes()) == (1024, 2112)


def test_reduction_caps_and_flops():
    m = model("inductor", "triton_red_fused__to_copy_mean_pow_1")
    assert (m.xnumel, m.rnumel) == (16, 32)
    # in [16,32] bf16 1024 B + out [16,1] f32 64 B; (mean, pow) · 16·32
    assert (m.flops(), m.bytes()) == (1024, 1088)
    assert m.compute_spec() == "vector_fp32"


def test_persistent_in_out_counted_once():
    m = model("inductor", "triton_per_fused__softmax_2")
    assert m.bytes() == 16 * 32 * 4 and m.flops() == 512


def test_gather_counts_only_indexed_rows():
    m = model("inductor", "triton_poi_fused__to_copy_embedding_3")
    # ids 16·8 = 128 + table [1000, 32] f32 capped at xnumel 512 elements = 2048 + out 1024
    assert m.bytes() == 128 + 2048 + 1024
    assert m.flops() == 0  # copy/embedding only: bytes, no FLOPs


def test_mm_template_is_a_gemm():
    m = model("inductor", "triton_tem_fused_mm_4")
    assert m.kind == "matrix" and m.compute_spec() == "matrix_bf16"
    # 2·16·24·32 = 24576; (16·32 + 32·24 + 16·24)·2 = 3328
    assert (m.flops(), m.bytes()) == (24576, 3328)


class _Op:
    def __init__(self, name, dims, types, ci):
        self.name, self.perf_meta = name, {}
        self.args = {"Input Dims": dims, "Input type": types, "Concrete Inputs": ci}


def test_unrecorded_xnumel_is_a_reason():
    with pytest.raises(ModelError, match="xnumel not recorded"):
        InductorKernel(_Op("triton_poi_fused_0", [[32], [32, 8]], ["int", "float"], ["", ""]))
