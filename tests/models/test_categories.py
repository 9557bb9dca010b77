"""models/categories.py: the categories of ops without a perf model, first full match wins, else other."""

from __future__ import annotations

import re

import pytest

from perfreport.models.categories import CATEGORIES
from perfreport.models.registry import category_of, model_for


def _first(name: str) -> str:
    for rx, cat in CATEGORIES:
        if re.fullmatch(rx, name):
            return cat
    return "other"


@pytest.mark.parametrize(
    ("name", "cat"),
    [
        ("aten::einsum", "GEMM"),
        ("aten::_int_mm", "GEMM"),
        ("vendor::fused_gemm_a8w8", "GEMM"),
        ("torchao::scaled_mm", "GEMM"),
        ("nccl:all_reduce", "comm"),
        ("record_param_comms", "comm"),
        ("c10d::allgather_", "comm"),
        ("my_lib::custom_all_to_all", "comm"),
        ("Memcpy DtoH (Device -> Pinned)", "memcpy"),
        ("aten::gather", "memcpy"),
        ("aten::scatter_add_", "memcpy"),
        ("aten::zeros_like", "memcpy"),
        ("aten::_foreach_add_", "elementwise"),
        ("aten::native_dropout", "elementwise"),
        ("aten::bernoulli_", "elementwise"),
        ("aten::argsort", "reduce"),
        ("aten::topk", "reduce"),
        ("aten::unique_consecutive", "reduce"),
        ("aten::nll_loss_forward", "reduce"),
        ("aten::dropout_like_nothing", "other"),  # full match only: a prefix is not enough
        ("my_op", "other"),
    ],
)
def test_names_without_a_model(name, cat):
    assert model_for(name) is None
    assert _first(name) == cat
    assert category_of(name) == cat


def test_a_model_wins_over_the_patterns():
    # Inductor's kernels' ops have a model (models/inductor.py); the patterns say what they are
    for name, cat in (("triton_poi_fused_add_0", "elementwise"), ("triton_red_fused_sum_1", "reduce")):
        assert _first(name) == cat
        assert category_of(name) == model_for(name).category
    assert _first("triton_per_fused_softmax_2") == "reduce"


def test_the_first_pattern_wins():
    # "*gemm*" (GEMM) is listed before the collectives: a name with both is GEMM
    assert _first("fused_gemm_all_reduce") == "GEMM"
    # the collectives come before memcpy
    assert _first("aten::all_gather_into_tensor_cat") == "comm"


def test_every_pattern_compiles_and_names_a_known_category():
    assert [c for _, c in CATEGORIES] == ["GEMM", "comm", "memcpy", "elementwise", "reduce"]
    for rx, _ in CATEGORIES:
        re.compile(rx)
