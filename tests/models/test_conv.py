"""Convolution models: output size, groups, transposed, N-d, backward."""

from types import SimpleNamespace

import pytest

from perfreport.errors import ModelError
from perfreport.models import conv

F32, BF16 = "float", "c10::BFloat16"


def conv_op(
    x, w, bias, stride, pad, dil, transposed="False", out_pad="[0]", groups="1", dtype=F32, name="aten::convolution"
):
    dims = [x, w, bias, [], [], [], [], [], []]
    types = [
        dtype,
        dtype,
        dtype if bias else "",
        "ScalarList",
        "ScalarList",
        "ScalarList",
        "Scalar",
        "ScalarList",
        "Scalar",
    ]
    conc = ["", "", "", stride, pad, dil, transposed, out_pad, groups]
    return SimpleNamespace(
        name=name,
        perf_meta={},
        args={"Input Dims": dims, "Input type": types, "Input Strides": [[]] * 9, "Concrete Inputs": conc},
    )


def test_conv2d_hand():
    m = conv.Conv(conv_op([2, 3, 8, 8], [4, 3, 3, 3], [4], "[1, 1]", "[1, 1]", "[1, 1]"))
    # out 8x8; 2·N·C_out·H·W·C_in·kH·kW = 2·2·4·64·3·9 = 27648 + bias 2·4·64 = 512 -> 28160
    assert m.out_sp == [8, 8] and m.flops() == 28160
    # in 384 + w 108 + out 512 + bias 4 = 1008 elements · 4 B = 4032
    assert m.bytes() == 4032 and m.category == "CONV_fwd" and m.kind == "matrix"


def test_stride_groups_dilation():
    m = conv.Conv(conv_op([1, 8, 9, 9], [8, 2, 3, 3], [], "[2]", "[0]", "[2]", groups="4", dtype=BF16))
    # out = floor((9 + 0 − 2·2 − 1)/2) + 1 = 3 per dim
    assert m.out_sp == [3, 3]
    # 2·1·8·9·(8/4)·9 = 2592
    assert m.flops() == 2592 and m.precision() == "bf16"


def test_conv1d_and_3d():
    c1 = conv.Conv(conv_op([1, 2, 10], [3, 2, 4], [], "[1]", "[0]", "[1]"))
    # out 7: 2·1·3·7·2·4 = 336
    assert c1.flops() == 336
    c3 = conv.Conv(conv_op([1, 1, 4, 4, 4], [2, 1, 2, 2, 2], [], "[2, 2, 2]", "[0, 0, 0]", "[1, 1, 1]"))
    # out 2x2x2: 2·1·2·8·1·8 = 256
    assert c3.flops() == 256


def test_transposed():
    m = conv.Conv(
        conv_op([1, 4, 5, 5], [4, 2, 3, 3], [], "[2, 2]", "[1, 1]", "[1, 1]", transposed="True", out_pad="[1, 1]")
    )
    # out = (5−1)·2 − 2 + 2 + 1 + 1 = 10; C_out = 2
    assert m.out_sp == [10, 10] and m.c_out == 2
    # 2·N·C_in·H_in·W_in·(C_out/groups)·k = 2·1·4·25·2·9 = 3600
    assert m.flops() == 3600


def test_backward():
    dims = [[2, 4, 8, 8], [2, 3, 8, 8], [4, 3, 3, 3], [], [], [], [], [], [], [], []]
    types = [F32] * 3 + ["ScalarList"] * 4 + ["Scalar", "ScalarList", "Scalar", "ScalarList"]
    conc = ["", "", "", "[4]", "[1, 1]", "[1, 1]", "[1, 1]", "False", "[0]", "1", "[True, True, True]"]
    m = conv.ConvBackward(
        SimpleNamespace(
            name="aten::convolution_backward",
            perf_meta={},
            args={"Input Dims": dims, "Input type": types, "Input Strides": [[]] * 11, "Concrete Inputs": conc},
        )
    )
    # 2 × forward MACs (27648) + grad_bias 512 = 55808
    assert m.flops() == 55808 and m.category == "CONV_bwd"
    # g 512 + (w 108 + dx 384) + (x 384 + dw 108) + db 4 = 1500 elements · 4 = 6000
    assert m.bytes() == 6000


def test_bad_conv():
    with pytest.raises(ModelError):
        conv.Conv(conv_op([1, 3, 2, 2], [4, 3, 5, 5], [], "[1]", "[0]", "[1]"))
