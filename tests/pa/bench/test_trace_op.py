"""pa/bench/trace_op.py: the custom op forwards to the backend chosen with dispatch_to, with the
case's arguments in the recorded order; without a backend it refuses."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

torch = pytest.importorskip("torch")

from perfreport.pa.bench.case import PACase  # noqa: E402
from perfreport.pa.bench.trace_op import OP, call, dispatch_to  # noqa: E402

CASE = PACase(context=32, batch=1, q_len=1, q_heads=2, kv_heads=1, head_dim=16, v_head_dim=16, page=16)


def _inputs():
    return SimpleNamespace(
        query=torch.ones(1, 2, 16, dtype=torch.bfloat16),
        key_cache=torch.zeros(2, 16, 1, 16, dtype=torch.bfloat16),
        value_cache=torch.zeros(2, 16, 1, 16, dtype=torch.bfloat16),
        block_tables=torch.tensor([[0, 1]], dtype=torch.int32),
        context_lens=torch.tensor([32], dtype=torch.int32),
        k_scale=None,
        v_scale=None,
    )


def test_the_op_runs_the_chosen_backend():
    seen = {}

    def backend(out, q, k, v, bt, cl, ks, vs, scale, layout):
        seen.update(scale=scale, layout=layout, k_scale=ks, bt=bt.tolist())
        out.fill_(3.0)

    out = torch.zeros(1, 2, 16, dtype=torch.bfloat16)
    with dispatch_to(backend) as op:
        assert op is OP
        call(out, _inputs(), CASE)
    assert bool((out == 3.0).all())
    assert seen == {"scale": 16**-0.5, "layout": "NHD", "k_scale": None, "bt": [[0, 1]]}


def test_without_a_backend_the_op_refuses():
    out = torch.zeros(1, 2, 16, dtype=torch.bfloat16)
    with pytest.raises(RuntimeError, match="no backend selected"):
        call(out, _inputs(), CASE)


def test_dispatch_to_restores_the_previous_backend():
    order = []
    out = torch.zeros(1, 2, 16, dtype=torch.bfloat16)
    with dispatch_to(lambda *a: order.append("outer")):
        with dispatch_to(lambda *a: order.append("inner")):
            call(out, _inputs(), CASE)
        call(out, _inputs(), CASE)
    assert order == ["inner", "outer"]
