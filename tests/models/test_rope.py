"""models/rope.py: rotary embedding in place on query and key, worked by hand."""

from __future__ import annotations

import pytest

from perfreport.errors import ModelError
from perfreport.models.rope import RotaryEmbedding
from tests.kit import fake_op

BF16 = "c10::BFloat16"


def _op(q=(6, 8 * 64), k=(6, 2 * 64), head="64", cache=(4096, 64), neox="True"):
    dims = [[6], list(q), list(k) if k else [], [], list(cache), []]
    types = ["long int", BF16, BF16 if k else "", "Scalar", "float", "Scalar"]
    return fake_op("_C::rotary_embedding", dims, types, concrete=["", "", "", head, "", neox])


def test_full_rotary_on_query_and_key():
    m = RotaryEmbedding(_op())
    assert (m.T, m.H_Q, m.H_KV, m.rot_dim, m.is_neox) == (6, 8, 2, 64, True)
    R = 6 * (8 + 2) * 64  # 3,840 rotated elements
    assert m.flops() == 3 * R == 11_520
    # read + write in place (bf16) + positions (6 int64) + one fp32 cache row per token
    assert m.bytes() == 2 * R * 2 + 6 * 8 + 6 * 64 * 4 == 16_944


def test_partial_rotary_and_no_key():
    m = RotaryEmbedding(_op(k=None, cache=(4096, 32), neox="False"))
    assert (m.H_KV, m.rot_dim, m.is_neox) == (0, 32, False)
    assert m.flops() == 3 * 6 * 8 * 32


def test_refusals():
    with pytest.raises(ModelError, match="head_size not recorded"):
        RotaryEmbedding(_op(head=""))
    with pytest.raises(ModelError, match=r"query \[6, 500\] is not 6 tokens x heads x 64"):
        RotaryEmbedding(_op(q=(6, 500)))
