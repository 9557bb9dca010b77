"""A small bench case and its inputs for the backend tests, and a vendor package made absent."""

from __future__ import annotations

import sys

from perfreport.pa.bench.case import PACase

GPU = {"on_gpu": True, "partitions": "auto"}
CPU = {"on_gpu": False, "partitions": "auto"}


def case_and_inputs(**kw):
    base = dict(context=40, batch=2, q_len=1, q_heads=4, kv_heads=1, head_dim=32, v_head_dim=32, page=16)
    base.update(kw)
    c = PACase(**base)
    inp = c.inputs()
    return c, inp


def absent(monkeypatch, *modules):
    """Make ``import <module>`` fail as it does when the package is not installed."""
    for m in modules:
        monkeypatch.setitem(sys.modules, m, None)
