"""Pooling / resampling / serving norm models on real CPU aten ops and stand-ins."""

from perfreport.models.pooling import pool_out
from tests.models.serving_ops import model


def test_pool_out_formula():
    # ⌊(8 + 2 − 2 − 1)/2⌋ + 1 = 4;  ceil_mode: ⌈7/2⌉ + 1 = 5 (last window starts at 8 < 8 + 1)
    assert pool_out(8, 3, 2, 1, 1, False) == 4
    assert pool_out(8, 3, 2, 1, 1, True) == 5
    # in 5, k 2, s 2, p 1, ceil: ⌈5/2⌉ + 1 = 4, but window 4 starts at 6 >= 5 + 1: dropped -> 3
    assert pool_out(5, 2, 2, 1, 1, True) == 3
    assert pool_out(7, 2, 2, 0, 1, True) == 4 and pool_out(7, 2, 2, 0, 1, False) == 3


def test_max_pool2d_with_indices():
    m = model("vision", "aten::max_pool2d_with_indices")
    assert m.out_shape == (2, 4, 4, 4) and m.category == "Pool"
    # 128 outputs · 9 comparisons; input 512·4 + output 128·4 + int64 indices 128·8
    assert (m.flops(), m.bytes()) == (1152, 2048 + 512 + 1024)


def test_max_pool2d_with_indices_backward():
    m = model("vision", "aten::max_pool2d_with_indices_backward")
    # grad_output 128·4 + indices 128·8 read, grad_input 512·4 written
    assert (m.flops(), m.bytes()) == (128, 512 + 1024 + 2048)


def test_upsample_nearest_2d_scale_factors_and_1d_size():
    m = model("vision", "aten::upsample_nearest2d")
    assert m.out_shape == (2, 4, 16, 16)  # .vec overload: scale_factors [2., 2.]
    assert (m.flops(), m.bytes()) == (2048, 2048 + 8192)
    m = model("vision", "aten::upsample_nearest1d")
    assert m.out_shape == (2, 4, 9)
    assert m.bytes() == 40 * 4 + 72 * 4


def test_miopen_batch_norm_backward_input_first():
    m = model("vision", "aten::miopen_batch_norm_backward")
    assert m.category == "Norm_bwd" and m.params()["op_shape"] == (2, 4, 8, 8)
    # (8 + 2 + 1) per element · 512; bytes: grad_out 2048 + input 2048 + save_mean/var 32
    # + grad_input 2048 + weight 16 · (grad_weight + grad_bias)
    assert (m.flops(), m.bytes()) == (11 * 512, 2048 + 2048 + 32 + 2048 + 32)


def test_aiter_groupnorm_run_caller_allocated():
    m = model("vision", "aiter::_groupnorm_run")
    assert m.params()["op_shape"] == (2, 8, 4, 4)
    # (5 + 2 affine)·256 + 3·(N·groups = 4); bytes 2·256·2 + weight 16 + bias 16
    assert (m.flops(), m.bytes()) == (7 * 256 + 12, 1024 + 32)
