"""Eager GPU traces keep the kernel-less children of vllm::moe_forward (the expert-weight views
the "MoE shapes" pass reads); other kernel-less ops are still left out.

fixtures/tree/moe_eager_gpu.json: moe_forward [T 32, H 3072, E 32] with a TopK child (k 4,
one kernel), two kernel-less views of the MXFP4 expert weights and two matmul kernels of
its own; then an aten::add whose kernel-less aten::view child is not kept.
"""

from perfreport.models.moe.experts import VllmMoeForward
from perfreport.pipeline import load_tree
from tests.conftest import FIX

TRACE = FIX / "tree" / "moe_eager_gpu.json"


def test_moe_children_kept_others_dropped():
    tree = load_tree(str(TRACE))
    (moe,) = tree.ops_named("vllm::moe_forward")
    kids = [c.name for c in moe.children if c.cat == "cpu_op"]
    assert kids == ["TopK", "aten::view", "aten::view"]
    assert [c.name for c in tree.ops_named("TopK")[0].children if c.cat == "cpu_op"] == ["aten::empty"]
    (add,) = tree.ops_named("aten::add")
    assert not [c for c in (add.children or ()) if c.cat == "cpu_op"]  # view dropped
    assert moe.perf_meta["moe_top_k"] == 4
    assert moe.perf_meta["moe_expert_weights"][:2] == (
        ((32, 1536, 5888), "unsigned char"),
        ((32, 1472, 3072), "unsigned char"),
    )


def test_eager_row_matches_the_graph_capture_figures():
    tree = load_tree(str(TRACE))
    m = VllmMoeForward(tree.ops_named("vllm::moe_forward")[0])
    # the same layer as the vLLM GPT-OSS capture (tests/models/moe/test_experts.py)
    assert m.flops() == 6945767424 and m.experts.bytes_per_expert == 14413824
    assert len(tree.ops_named("vllm::moe_forward")[0].subtree_kernels()) == 3
