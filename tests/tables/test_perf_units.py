"""tables/perf_units.py: the units walk reads the same as the stack walk it replaced, unit by unit, on
committed traces (graph launches, annotations, compiled kernels, ops without GPU events); kernel-list
codes number the units' kernel lists as a dict filled unit by unit numbers them."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from perfreport.events import CPU_OP, as_seq
from perfreport.models.registry import model_for, model_for_op
from perfreport.pipeline import load_tree
from perfreport.tables.coverage import split_graph_kernels
from perfreport.tables.op_times import LAUNCH
from perfreport.tables.ops import annotation_units
from perfreport.tables.perf_units import collect_units, linked_units, sig_codes

FIX = Path(__file__).resolve().parents[2] / "fixtures"
TRACES = ["sglang_tiny_graph", "serving_inductor", "torch_compile_triton", "cpu_block", "vllm_decode_graph"]


def _stack_walk(tree):
    """The walk linked_units replaces: a stack of ops, one op popped at a time."""
    out = []
    for root in tree.roots:
        stack = [root]
        while stack:
            o = stack.pop()
            if o.cat in LAUNCH:
                if o.parent is None and o.kernels:
                    out.append((o, o.name, list(o.kernels), None, ""))
                stack.extend(reversed(o.children or ()))
                continue
            if o.cat == CPU_OP:
                m = o.perf_meta
                cls = model_for_op(o.name, m) if m else model_for(o.name)
                if cls is not None:
                    ks = o.subtree_kernels() if o.children else list(o.kernels or [])
                    if ks or not tree.gpu:
                        out.append((o, o.name, list(ks), cls, repr(sorted(m.items())) if m else ""))
                    continue
            if o.kernels:
                own, graphs = split_graph_kernels(o.kernels)
                if own and o.cat == CPU_OP:
                    out.append((o, o.name, own, None, ""))
                elif own:
                    out += [(o, n, ks, None, "") for n, _, ks in annotation_units(o, own)]
                out += [(launch, launch.name, ks, None, "") for launch, ks in graphs]
            stack.extend(reversed(o.children or ()))
    return out


@pytest.mark.parametrize("name", TRACES)
def test_the_walk_reads_as_the_stack_walk(name):
    tree = load_tree(str(FIX / f"{name}.json.gz"))
    got = [(o, n, list(as_seq(ks)), cls, mk) for o, n, ks, cls, mk in zip(*linked_units(tree))]
    assert got == _stack_walk(tree) and got
    units = list(collect_units(tree))
    assert [g.uid for _, _, ks, _ in units for g in ks if ks] == [g.uid for *_, ks, _, _ in got for g in ks] + [
        g.uid for g in tree.gpu if g.launcher is None
    ]


def _sig_loop(name_code, lens):
    seen: dict = {}
    out, at = [], 0
    for k in lens:
        out.append(seen.setdefault(tuple(name_code[at : at + k]), len(seen)))
        at += k
    return out


def test_kernel_list_codes_number_as_the_unit_loop():
    rng = np.random.default_rng(3)
    cases = [([], []), ([2], [1]), ([], [0, 0]), ([0, 1, 0, 1, 1, 0], [2, 1, 0, 2, 1])]
    for _ in range(30):
        lens = rng.integers(0, 4, 40)
        cases.append((rng.integers(0, 4, int(lens.sum())).tolist(), lens.tolist()))
    for nc, lens in cases:
        got = sig_codes(np.asarray(nc, dtype=np.int32), np.asarray(lens, dtype=np.int32), 4)
        assert got.tolist() == _sig_loop(nc, lens)
