"""Backward nodes linked to their forward op through Sequence number get backward models."""

from __future__ import annotations

from types import MappingProxyType, SimpleNamespace


from perfreport.models.backward import BackwardOfForward
from perfreport.models.registry import model_for_op
from perfreport.pipeline import load_tree
from tests.conftest import FIX


def _node(fwd_name, fwd_args):
    return SimpleNamespace(
        name="AddmmBackward0",
        args=MappingProxyType({}),
        perf_meta={"forward": {"name": fwd_name, "args": fwd_args, "uid": 0}},
    )


_ADDMM = {
    "Input Dims": [[256], [64, 128], [128, 256], [], []],
    "Input type": ["float", "float", "float", "Scalar", "Scalar"],
    "Input Strides": [[1], [128, 1], [1, 128], [], []],
    "Concrete Inputs": ["", "", "", "1", "1"],
}


def test_gemm_backward_hand_value():
    # forward addmm: bias[256] + x[64,128] @ w[128,256], fp32
    # FLOPs = dA (2*64*256*128) + dB (2*64*256*128) = 8,388,608
    # bytes = 2*|C| + 2*|A| + 2*|B| = 4*(2*64*256 + 2*64*128 + 2*128*256)
    #       = 4*(32768 + 16384 + 65536) = 458,752
    # (no aten::sum inside the node: the bias gradient is the aten::sum beside it)
    node = _node("aten::addmm", _ADDMM)
    assert model_for_op(node.name, node.perf_meta) is BackwardOfForward
    m = BackwardOfForward(node)
    assert m.category == "GEMM_bwd"
    assert m.flops() == 8_388_608
    assert m.bytes() == 458_752
    assert m.compute_spec() == "matrix_fp32"


def test_gemm_backward_counts_the_bias_gradient_reduced_inside_it():
    node = _node("aten::addmm", _ADDMM)
    inner = SimpleNamespace(name="aten::sum")
    node.walk = lambda: iter([node, inner])
    m = BackwardOfForward(node)
    # + dbias = Σ_M dC: 64*256 = 16,384 adds -> 8,404,992; + |bias| written 4*256 -> 459,776
    assert (m.flops(), m.bytes()) == (8_404_992, 459_776)


def test_sdpa_backward_is_2_5x_forward():
    # flash forward: q,k,v [2,4,64,32] bf16, causal -> pairs = 64*64/2 = 2048 (the half-square
    # convention of the forward model, as in the reference tool)
    # fwd FLOPs = 2*B*H*pairs*(dqk+dv) = 2*2*4*2048*64 = 2,097,152 ; bwd = 2.5x = 5,242,880
    # bytes = 2*(3*|Q|) + 2*|O| = 8*|Q| = 8 * 2*4*64*32*2 = 262,144
    dims = [2, 4, 64, 32]
    args = {
        "Input Dims": [dims, dims, dims, [], [], [], []],
        "Input type": ["c10::BFloat16"] * 3 + ["Scalar"] * 4,
        "Input Strides": [[8192, 2048, 32, 1]] * 3 + [[]] * 4,
        "Concrete Inputs": ["", "", "", "0.", "True", "False", ""],
    }
    m = BackwardOfForward(_node("aten::_scaled_dot_product_flash_attention", args))
    assert m.category == "SDPA_bwd"
    assert m.flops() == 5_242_880
    assert m.bytes() == 262_144


def test_link_on_real_cpu_trace():
    tree = load_tree(str(FIX / "cpu_block.json.gz"))
    nodes = [o for o in tree.ops if o.name == "AddmmBackward0"]
    assert len(nodes) == 2
    for n in nodes:
        fwd = n.perf_meta["forward"]
        assert fwd["name"] == "aten::addmm"
        f = next(o for o in tree.ops if o.uid == fwd["uid"])
        assert f.seq == n.seq
    # nodes whose forward has no backward rule are left alone
    assert all("forward" not in o.perf_meta for o in tree.ops if o.name == "ViewBackward0")


def test_node_names_are_the_backward_nodes_only():
    from perfreport.passes.backward_link import node_names

    names = ["AddmmBackward0", "MulBackward1", "autograd::engine::evaluate_function: AddmmBackward0"]
    names += ["aten::mm", "aten::convolution_backward", "autograd::engineBackward0"]
    assert node_names(names) == {"AddmmBackward0", "MulBackward1"}
