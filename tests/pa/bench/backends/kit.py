"""A small bench case and its inputs for the backend tests, and a vendor package made absent."""

from __future__ import annotations

import sys

from perfreport.pa.bench.case import PACase
from perfreport.pa.kernel.cache import build_inputs

GPU = {"on_gpu": True, "partitions": "auto"}
CPU = {"on_gpu": False, "partitions": "auto"}


def case_and_inputs(**kw):
    base = dict(context=40, batch=2, q_len=1, q_heads=4, kv_heads=1, head_dim=32, v_head_dim=32, page=16)
    base.update(kw)
    c = PACase(**base)
    inp = build_inputs(
        c.context_lens,
        q_len=c.q_len,
        q_heads=c.q_heads,
        kv_heads=c.kv_heads,
        head_dim=c.head_dim,
        v_head_dim=c.v_head_dim,
        page_size=c.page,
        kv_dtype=c.kv_dtype,
        layout=c.layout,
        v5=c.v5,
    )
    return c, inp


def absent(monkeypatch, *modules):
    """Make ``import <module>`` fail as it does when the package is not installed."""
    for m in modules:
        monkeypatch.setitem(sys.modules, m, None)
