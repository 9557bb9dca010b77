"""Elementwise, copy/cast, gated activation, rotary embedding and reduction models."""

import pytest

from perfreport.models import activation, elementwise as ew, reduce as red, rope
from perfreport.models.registry import model_for
from tests.kit import fake_op

BF16, F32, I64 = "c10::BFloat16", "float", "long int"


op = fake_op


def test_unary():
    m = ew.UnaryElementwise(op("aten::silu", [[4, 8]], [BF16]))
    # 32 output elements -> 32 FLOPs; read 32·2 + write 32·2 = 128 B
    assert (m.flops(), m.bytes(), m.category, m.kind) == (32, 128, "UnaryElementwise", "vector")


def test_unary_int_to_float_result():
    m = ew.UnaryElementwise(op("aten::sqrt", [[10]], ["int"]))
    # int input, float output: 10·4 + 10·4 = 80
    assert m.out_dtype == "float" and m.bytes() == 80


def test_binary_broadcast():
    m = ew.BinaryElementwise(op("aten::mul", [[16, 8, 32], [16, 8, 1]], [F32, F32]))
    # out 16·8·32 = 4096 elements -> 4096 FLOPs
    # bytes: a 4096·4 + b 128·4 + out 4096·4 = 16384 + 512 + 16384 = 33280
    assert (m.flops(), m.bytes()) == (4096, 33280)
    assert m.params()["shape_in2"] == (16, 8, 1)


def test_binary_mixed_dtype_promotes_and_scalar():
    m = ew.BinaryElementwise(op("aten::add", [[4, 4], [4, 4], []], [BF16, F32, "Scalar"], ["", "", "1"]))
    # bf16 + fp32 -> fp32: 16·2 + 16·4 + 16·4 = 160
    assert m.out_dtype == F32 and m.bytes() == 160
    s = ew.BinaryElementwise(op("aten::mul", [[8], []], [BF16, "Scalar"], ["", "0.5"]))
    # tensor·Python scalar: bf16 stays bf16: 8·2 + 8·2 = 32
    assert s.out_dtype == BF16 and s.bytes() == 32
    z = ew.BinaryElementwise(op("aten::add", [[8], []], ["int", "double"]))
    # int tensor + 0-d double -> float32 (default dtype): 8·4 + 1·8 + 8·4 = 72
    assert z.out_dtype == "float" and z.bytes() == 72


def test_comparison_gives_bool_and_where_is_ternary():
    c = ew.BinaryElementwise(op("aten::eq", [[8], [8]], [I64, I64]))
    assert c.out_dtype == "bool" and c.bytes() == 8 * 8 * 2 + 8
    w = model_for("aten::where")(op("aten::where", [[8, 1], [8, 4], [4]], ["bool", F32, F32]))
    # out 8·4 = 32; bytes 8 (cond) + 128 + 16 + 128 = 280
    assert (w.flops(), w.bytes()) == (32, 280)


def test_copy_cast():
    m = ew.Copy(op("aten::copy_", [[16, 64], [16, 64], []], [F32, BF16, "Scalar"], ["", "", "False"]))
    # read src bf16 1024·2 + write dst fp32 1024·4 = 6144
    assert m.bytes() == 6144 and m.flops() == 1024 and m.params()["dtype_out"] == F32


def test_to_copy_and_to():
    t = ew.ToCopy(
        op(
            "aten::_to_copy",
            [[10], [], [], [], [], [], []],
            [I64, "Scalar", "", "", "", "Scalar", ""],
            ["", "6", "", "", "", "False", ""],
        )
    )
    # long -> float (code 6): 10·8 + 10·4 = 120
    assert t.out_dtype == F32 and t.bytes() == 120
    to = ew.To(
        op(
            "aten::to",
            [[10], [], [], [], []],
            [F32, "Scalar", "Scalar", "Scalar", ""],
            ["", "15", "False", "False", ""],
        )
    )
    assert to.out_dtype == BF16 and to.bytes() == 10 * 4 + 10 * 2


def test_silu_and_mul():
    m = activation.SiluAndMul(op("_C::silu_and_mul", [[32, 128], [32, 256]], [BF16, BF16]))
    # 5 FLOPs per output: 5·4096 = 20480; bytes (8192 + 4096)·2 = 24576
    assert (m.flops(), m.bytes(), m.category) == (20480, 24576, "Activation_fwd")


def test_rotary_embedding():
    m = rope.RotaryEmbedding(
        op(
            "_C::rotary_embedding",
            [[32], [32, 4096], [32, 512], [], [131072, 64], []],
            [I64, BF16, BF16, "Scalar", BF16, "Scalar"],
            ["", "", "", "64", "", "True"],
        )
    )
    # H_Q = 4096/64 = 64, H_KV = 512/64 = 8; rotated R = 32·72·64 = 147456
    assert (m.H_Q, m.H_KV, m.rot_dim) == (64, 8, 64)
    assert m.flops() == 3 * 147456
    # 2·R·2 = 589824 + positions 32·8 = 256 + cache rows 32·64·2 = 4096 -> 594176
    assert m.bytes() == 594176 and m.category == "RoPE_fwd"


def test_reduce_mean_keepdim():
    m = red.Reduce(
        op("aten::mean", [[16, 559, 1024], [], [], []], [F32, "ScalarList", "Scalar", ""], ["", "[-1]", "True", ""])
    )
    # output 16·559 = 8944 elements (the reference tool says 1: wrong)
    assert m.out_numel == 8944
    # FLOPs 9158656 adds + 8944 divides = 9167600; bytes (9158656 + 8944)·4 = 36670400
    assert (m.flops(), m.bytes()) == (9167600, 36670400)


def test_reduce_full_sum_int_promotes_and_argmax():
    s = red.Reduce(op("aten::sum", [[32], []], ["int", ""], ["", ""]))
    # int32 sum -> int64 output (PyTorch rule): 32·4 + 8 = 136
    assert s.out_dtype == I64 and s.bytes() == 136
    a = red.Reduce(op("aten::argmax", [[32, 100], [], []], [F32, "Scalar", "Scalar"], ["", "-1", "False"]))
    # 3200·4 read + 32 int64 indices = 12800 + 256
    assert a.bytes() == 13056
    c = red.Scan(op("aten::cumsum", [[32], [], []], ["int", "Scalar", ""], ["", "0", ""]))
    assert c.out_dtype == I64 and c.bytes() == 32 * 4 + 32 * 8


def test_softmax():
    m = red.Softmax(op("aten::_softmax", [[8, 128], [], []], [BF16, "Scalar", "Scalar"], ["", "-1", "True"]))
    # 5 FLOPs/element: 5120; half_to_float: read 1024·2 + write 1024·4 = 6144
    assert (m.flops(), m.bytes(), m.category) == (5120, 6144, "Reduce_fwd")


@pytest.mark.parametrize("name", ["aten::add_", "aten::mul", "aten::neg", "aten::copy_"])
def test_registered(name):
    assert model_for(name) is not None
