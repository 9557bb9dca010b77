"""MoE routing models on the captured stand-in ops (hand-worked FLOPs/bytes)."""

from pathlib import Path

import pytest

from perfreport.models.moe import routing as mr
from perfreport.models.registry import model_for
from perfreport.pipeline import load_tree

FIX = Path(__file__).resolve().parents[3] / "fixtures"


@pytest.fixture(scope="module")
def tree():
    return load_tree(str(FIX / "serving_moe.json.gz"))


def _model(tree, name):
    op = tree.ops_named(name)[0]
    cls = model_for(name)
    assert cls is not None and cls.category == "MoE"
    return cls(op)


def test_triton_topk(tree):
    m = _model(tree, "TopK")
    assert isinstance(m, mr.TritonTopK) and (m.T, m.E, m.k, m.softmax) == (6, 8, 2, True)
    # T·E selection + 5·T·k softmax = 48 + 60
    assert m.flops() == 108
    # logits 6·8·2 = 96 + values 6·2·2 = 24 + int16 ids 24 + bitmatrix 6·ceil(8/32)·4 = 24
    assert m.bytes() == 168
    assert m.compute_spec() == "vector_fp32"


def test_triton_sort_tokens(tree):
    m = _model(tree, "SortTokens")
    assert (m.T, m.k, m.E) == (6, 2, 8)
    assert m.flops() == 12  # one histogram increment per pick
    # read: scal 6·2·2 = 24 + int16 ids 24 + bitmatrix 24 = 72
    # write: hist 8·4 = 32 + two index lists 2·12·4 = 96 + gate values 12·2 = 24 + offsets 9·4 = 36
    assert m.bytes() == 72 + 32 + 96 + 24 + 36


def test_topk_softmax(tree):
    m = _model(tree, "_moe_C::topk_softmax")
    assert (m.T, m.E, m.k) == (6, 8, 2)
    assert m.flops() == 6 * 6 * 8  # (5 softmax + 1 selection) per logit
    # gating 6·8·4 = 192 read; weights 6·2·4 + ids 48 + token_expert_indices 48 written
    assert m.bytes() == 192 + 48 + 48 + 48


def test_moe_align_block_size(tree):
    m = _model(tree, "_moe_C::moe_align_block_size")
    assert (m.T, m.k) == (6, 2) and m.flops() == 12
    # topk_ids 12·4 + sorted_token_ids 36·4 + expert_ids 9·4 + num_tokens_post_pad 4
    assert m.bytes() == 48 + 144 + 36 + 4
