"""aten::cat / aten::stack / aten::index_select: 0 FLOP, bytes worked out by hand."""

from pathlib import Path
from types import SimpleNamespace

import pytest

from perfreport.errors import ModelError
from perfreport.models.data_movement import Concat, IndexSelect
from perfreport.models.registry import model_for
from perfreport.pipeline import load_tree

FIX = Path(__file__).resolve().parents[2] / "fixtures"


def _op(name, dims, types, concrete, meta=None):
    return SimpleNamespace(
        name=name, args={"Input Dims": dims, "Input type": types, "Concrete Inputs": concrete}, perf_meta=meta or {}
    )


def test_cat_two_bf16_halves():
    # the RoPE rotate-half concatenation of the H100 Qwen trace: 2 x (16,16,559,32), 2-byte elements
    op = _op(
        "aten::cat",
        [[[16, 16, 559, 32], [16, 16, 559, 32]], []],
        ["TensorList", "Scalar"],
        ["", "-1"],
        {"element_bytes": 2},
    )
    m = Concat(op)
    # 16*16*559*32 = 4,579,328 elements each; read 2 x 4,579,328 x 2 B, write the same
    assert m.bytes() == 2 * (2 * 4_579_328) * 2 == 36_634_624
    assert m.flops() == 0 and m.params()["dim"] == -1
    assert model_for("aten::cat") is Concat and model_for("aten::stack") is Concat


def test_cat_without_element_size_says_why():
    op = _op("aten::cat", [[[2, 3], [4, 3]], []], ["TensorList", "Scalar"], ["", "0"])
    with pytest.raises(ModelError, match="element size unknown"):
        Concat(op)


def test_index_select_embedding_lookup():
    # embedding rows: self (151936, 1024) bf16, dim 0, index 8944 int64
    op = _op("aten::index_select", [[151936, 1024], [], [8944]], ["c10::BFloat16", "Scalar", "long int"], ["", "0", ""])
    m = IndexSelect(op)
    # index 8944 x 8 B = 71,552; rows read 8944 x 1024 x 2 B = 18,317,312; written the same
    assert m.out_shape == (8944, 1024)
    assert m.bytes() == 71_552 + 2 * 18_317_312 == 36_706_176
    assert model_for("aten::index_select") is IndexSelect


def test_index_select_bad_dim():
    op = _op("aten::index_select", [[4, 5], [], [3]], ["float", "Scalar", "long int"], ["", "2", ""])
    with pytest.raises(ModelError, match="out of range"):
        IndexSelect(op)


def test_h100_trace_cat_rows_get_their_width_from_the_kernel():
    tree = load_tree(str(FIX / "h100_qwen_0.5b.json.gz"))
    cats = tree.ops_named("aten::cat")
    assert cats
    widths = {o.perf_meta.get("element_bytes") for o in cats if o.subtree_kernels()}
    # bf16 activations (OpaqueType<2u>) and the fp32 rotary cache (OpaqueType<4u>)
    assert widths == {2, 4}


def test_cat_of_bf16_uses_the_16_bit_vector_peak():
    # issue 19: a 2-byte TensorList cat was set against vector_fp32; its elements are 16-bit
    op = _op("aten::cat", [[[4, 8], [4, 8]], []], ["TensorList", "Scalar"], ["", "0"], {"element_bytes": 2})
    assert Concat(op).compute_spec() == "vector_bf16"
    op4 = _op("aten::cat", [[[4, 8], [4, 8]], []], ["TensorList", "Scalar"], ["", "0"], {"element_bytes": 4})
    assert Concat(op4).compute_spec() == "vector_fp32"
    ix = _op("aten::index_select", [[100, 64], [], [10]], ["c10::Half", "Scalar", "long int"], ["", "0", ""])
    assert IndexSelect(ix).compute_spec() == "vector_fp16"


def test_fill_writes_self_once():
    # aten::fill_(self bf16 [1024, 1024], 0.): 1,048,576 elements x 2 B written, nothing read;
    # H100 SXM 3.35 TB/s -> 2,097,152 / 3.35e12 = 0.626 µs
    from perfreport.models.data_movement import Fill
    from perfreport.specs import load_arch, roofline

    op = _op("aten::fill_", [[1024, 1024], []], ["c10::BFloat16", "Scalar"], ["", "0."])
    m = Fill(op)
    assert m.bytes() == 2_097_152 and m.flops() == 0 and m.compute_spec() == "vector_bf16"
    t, bound = roofline(load_arch("h100"), m.flops(), m.bytes(), m.compute_spec())
    assert bound == "memory" and t == pytest.approx(2_097_152 / 3.35e12 * 1e6)
    assert model_for("aten::fill_") is Fill and model_for("aten::zero_") is Fill
