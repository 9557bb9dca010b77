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


def test_persistent_in_place_softmax_is_read_and_written():
    # its only buffer [16,32] f32 (2048 B) is read and written back: in_out_ptr0, 2 x 2048
    m = model("inductor", "triton_per_fused__softmax_2")
    assert m.bytes() == 2 * 16 * 32 * 4 and m.flops() == 512
    assert m.params()["in_out_buffers"] == 1 and m.assumptions() == []


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
    def __init__(self, name, dims, types, ci, **extra):
        self.name, self.perf_meta = name, {}
        self.args = {"Input Dims": dims, "Input type": types, "Concrete Inputs": ci, **extra}


BF16 = "c10::BFloat16"


def _kernel(name, tensors, ints, **extra):
    dims = [list(t) for t in tensors] + [[]] * len(ints)
    types = [BF16] * len(tensors) + ["Scalar"] * len(ints)
    ci = [""] * len(tensors) + [str(v) for v in ints]
    return InductorKernel(_Op(name, dims, types, ci, **extra))


def test_tiled_pointwise_index_space_is_ynumel_times_xnumel():
    # transpose copy in [1000, 512] -> out [512, 1000], bf16; args (in_ptr0, out_ptr0, ynumel 1000,
    # xnumel 512), kernel_kwargs YBLOCK,XBLOCK: two range trees -> index space 512,000 elements;
    # bytes = 2 buffers x 512,000 x 2 B = 2,048,000 (was xnumel alone: 2 x 512 x 2 = 2048, x1/1000)
    for extra in ({"kernel_kwargs": "YBLOCK=32,XBLOCK=32"}, {}):
        m = _kernel("triton_poi_fused_clone_0", [(1000, 512), (512, 1000)], [1000, 512], **extra)
        assert (m.numels, m.index_space) == ((1000, 512), 512_000)
        assert m.bytes() == 2_048_000 and m.flops() == 0


def test_size_variables_before_the_numels_are_not_index_space():
    # dynamic shapes: (in_ptr0, out_ptr0, ks0 = 7, xnumel 4096, r0_numel 64) with
    # kernel_kwargs XBLOCK,R0_BLOCK: the trees are the last two sizes; ks0 is not one
    m = _kernel("triton_red_fused_sum_0", [(4096, 64), (4096,)], [7, 4096, 64], kernel_kwargs="XBLOCK=1,R0_BLOCK=64")
    assert (m.xnumel, m.rnumel) == (4096, 64)
    # in 262,144 x 2 + out 4096 x 2 = 532,480 B; sum: one FLOP per reduced element
    assert m.bytes() == 532_480 and m.flops() == 262_144
    # a persistent reduction passes no R block: XBLOCK alone still means x and r0 trees
    p = _kernel("triton_per_fused_sum_0", [(4096, 64), (4096,)], [7, 4096, 64], kernel_kwargs="XBLOCK=8")
    assert (p.xnumel, p.rnumel) == (4096, 64)


def test_without_kernel_kwargs_the_run_fits_the_largest_buffer():
    # (in_ptr0 [8, 64] , out_ptr0 [8, 64], ks0 = 100, ynumel 8, xnumel 64): 100*8*64 > 512 elements,
    # so ks0 is no range tree; 8*64 = 512 fits
    m = _kernel("triton_poi_fused_add_0", [(8, 64), (8, 64)], [100, 8, 64])
    assert m.numels == (8, 64) and m.index_space == 512


def test_in_out_ptr_is_proven_when_the_last_buffer_cannot_be_an_output():
    # conv output updated in place with a per-channel bias: (in_out_ptr0 [4, 16, 8, 8], in_ptr0 [16],
    # xnumel 4096); the bias (16 elements < 4096) is no output, so there is no out_ptr and
    # in_out_ptr0 is read and written: 4096 x 2 x 2 + 16 x 2 = 16,416 B (was 8,224)
    m = _kernel("triton_poi_fused_convolution_gelu_0", [(4, 16, 8, 8), (16,)], [4096], kernel_kwargs="XBLOCK=256")
    assert m.bytes() == 16_416 and m.params()["in_out_buffers"] == 1 and m.assumptions() == []


def test_undecidable_in_place_buffers_are_an_assumption_with_bounds():
    # (a [4096], b [4096], xnumel 4096): (in_ptr0, out_ptr0) or (in_out_ptr0, in_ptr0) or both
    # in place: point counts each once (16,384 B), bounds 16,384 ... 32,768
    m = _kernel("triton_poi_fused_add_0", [(4096,), (4096,)], [4096])
    (a,) = m.assumptions()
    assert m.bytes() == 16_384 and (a.bytes_min, a.bytes_max) == (16_384, 32_768)
    assert "in_out_ptr" in a.text and "bounds 0 … 2" in a.text


def test_inductor_own_byte_estimate_wins_when_recorded():
    # kernel_num_gb (benchmark_kernel / profile_bandwidth): Inductor counted the in-place buffer twice
    m = _kernel("triton_poi_fused_add_0", [(4096,), (4096,)], [4096], kernel_num_gb=2.4576e-05)
    assert m.bytes() == 24_576 and m.assumptions() == []


def test_unrecorded_xnumel_is_a_reason():
    with pytest.raises(ModelError, match="xnumel not recorded"):
        InductorKernel(_Op("triton_poi_fused_0", [[32], [32, 8]], ["int", "float"], ["", ""]))
