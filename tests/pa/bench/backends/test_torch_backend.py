"""pa/bench/backends/torch_backend.py: the fp32 reference as a backend: one launch writes the
bf16 output; a 5D case is converted to NHD once and gives the same attention."""

from __future__ import annotations

import torch

from perfreport.pa.bench.backends import load
from perfreport.pa.bench.backends.torch_backend import PACKAGE, prepare
from perfreport.pa.kernel.reference import paged_attention_ref
from tests.pa.bench.backends.kit import CPU, case_and_inputs
from tests.kit.tensors import assert_close


def test_one_launch_writes_the_reference_in_bf16():
    case, inp = case_and_inputs(q_len=2, q_heads=4, kv_heads=2)
    p = prepare(inp, case, CPU)
    assert PACKAGE == "torch" and load("torch").prepare is prepare
    assert p.out.shape == (case.batch * case.q_len, case.q_heads, case.v_head_dim) and p.out.dtype == torch.bfloat16
    got = p.run()
    assert got is p.out
    ref = paged_attention_ref(
        inp.query,
        inp.key_cache,
        inp.value_cache,
        inp.block_tables,
        inp.context_lens,
        scale=inp.scale,
        q_len=inp.q_len,
        layout="NHD",
    )
    assert_close(got.float(), ref.float(), atol=1e-2, rtol=1e-2)


def test_a_5d_case_reads_the_same_caches():
    nhd_case, nhd = case_and_inputs(layout="NHD")
    five_case, five = case_and_inputs(layout="5D")  # same seed: the same values, another layout
    a = prepare(nhd, nhd_case, CPU).run()
    b = prepare(five, five_case, CPU).run()
    assert_close(a, b, atol=1e-5, rtol=1.6e-2)  # assert_close's bf16 defaults
