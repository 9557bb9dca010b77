"""tables/perf_groups.py: units covering every GPU event once, grouped by op and arguments; a model
evaluated once per argument set (a failing model keeps its row with the reason); a bimodal group
split by its kernels or by layer parity."""

from __future__ import annotations

from perfreport.errors import ModelError
from perfreport.models.base import PerfModel
from perfreport.pipeline import load_tree
from perfreport.tables.perf_groups import Eval, collect_units, group_units, split_group
from tests.kit import X, fake_op, shape_args, write_trace

MM = shape_args([[64, 64], [64, 64]], ["float", "float"])


def _trace(tmp_path, durs, names=None, fname="t.json"):
    ev, t = [], 0
    for i, d in enumerate(durs):
        ev += [
            X("cpu_op", "aten::mm", t, 20, **MM),
            X("cuda_runtime", "cudaLaunchKernel", t + 2, 2, correlation=i + 1),
            X(
                "kernel",
                (names or ["gemm"] * len(durs))[i],
                10_000 + 1_000 * i,
                d,
                pid=0,
                tid=7,
                device=0,
                stream=7,
                correlation=i + 1,
            ),
        ]
        t += 100
    ev.append(X("kernel", "stray", 50_000, 3, pid=0, tid=7, device=0, stream=7, correlation=999))
    return load_tree(write_trace(tmp_path, ev, name=fname))


class Refuses(PerfModel):
    category = "GEMM"

    def __init__(self, op):
        raise ModelError(f"{op.name}: not this one")


class Buggy(PerfModel):
    def __init__(self, op):
        raise ZeroDivisionError("oops")


class Fine(PerfModel):
    category = "GEMM"
    kind = "matrix"

    def params(self):
        return {"M": 2}

    def flops(self):
        return 8

    def bytes(self):
        return 16

    def precision(self):
        return "fp32"


def test_eval_keeps_the_figures_or_the_reason():
    op = fake_op("aten::mm", [[2, 2]], ["float"])
    e = Eval(Fine, op)
    assert (e.model, e.params, e.flops, e.bytes, e.spec, e.bounds, e.reason) == (
        "Fine",
        {"M": 2},
        8.0,
        16.0,
        "matrix_fp32",
        (8.0, 8.0, 16.0, 16.0),
        "",
    )
    assert Eval(Refuses, op).reason == "aten::mm: not this one" and Eval(Refuses, op).flops is None
    assert Eval(Buggy, op).reason == "model failed: ZeroDivisionError: oops"


def test_units_cover_every_gpu_event_once(tmp_path):
    t = _trace(tmp_path, [10, 10, 10])
    units = list(collect_units(t))
    seen = [g.uid for _, _, ks, _ in units for g in ks]
    assert sorted(seen) == sorted(g.uid for g in t.gpu)
    assert [name for _, name, _, _ in units][-1] == "(unlinked) stray"
    assert all(cls is not None for op, name, _, cls in units if name == "aten::mm")


def test_one_group_per_op_and_arguments(tmp_path):
    groups = group_units(_trace(tmp_path, [10, 12, 14]))
    mm = [g for k, g in groups.items() if k[0] == "aten::mm"]
    assert len(mm) == 1 and list(mm[0].times) == [10.0, 12.0, 14.0]
    assert split_group(mm[0])[0][3] == ""  # not bimodal: one part, no flag


def test_a_bimodal_group_is_split_by_layer_parity_or_kernels(tmp_path):
    (grp,) = [g for k, g in group_units(_trace(tmp_path, [10, 100, 10, 100])).items() if k[0] == "aten::mm"]
    parts = split_group(grp)
    assert [p[0] for p in parts] == [[10.0, 10.0], [100.0, 100.0]]
    assert "split by layer parity: this part is the even instances (layer parity): 2 of 4 instances" in parts[0][3]
    names = ["gemm_small", "gemm_small", "gemm_big", "gemm_big"]
    (grp,) = [
        g for k, g in group_units(_trace(tmp_path, [10, 10, 100, 100], names, "k.json")).items() if k[0] == "aten::mm"
    ]
    parts = split_group(grp)
    assert [p[0] for p in parts] == [[10.0, 10.0], [100.0, 100.0]]
    assert "split by kernels: this part is kernels gemm_small" in parts[0][3]


def _part_loop(gid, sig):
    """The unit-by-unit numbering part_codes replaces: a part per (group, kernel list, parity of
    the unit's index among its group's units), numbered as first seen."""
    seen: dict = {}
    count: dict = {}
    codes, first, parity = [], [], []
    for u, (g, s) in enumerate(zip(gid, sig)):
        par = count.get(g, 0) % 2
        count[g] = count.get(g, 0) + 1
        c = seen.get((g, s, par))
        if c is None:
            c = seen[(g, s, par)] = len(seen)
            first.append(u)
            parity.append(par)
        codes.append(c)
    return codes, first, parity


def test_part_codes_number_as_the_unit_loop():
    import numpy as np

    from perfreport.tables.perf_groups import part_codes

    rng = np.random.default_rng(7)
    cases = [([], []), ([0], [3]), ([0, 0, 1, 0, 1, 1, 2, 0], [0, 0, 1, 1, 1, 0, 2, 0])]
    cases += [(rng.integers(0, 5, 60).tolist(), rng.integers(0, 3, 60).tolist()) for _ in range(20)]
    for gid, sig in cases:
        code, first, parity, by_group = part_codes(np.array(gid, dtype=np.int32), np.array(sig, dtype=np.int32))
        assert (code.tolist(), first.tolist(), parity.tolist()) == _part_loop(gid, sig)
        assert by_group.tolist() == sorted(range(len(gid)), key=lambda u: gid[u])  # stable: unit order in a group


def _group_loop(tree):
    """The unit-by-unit grouping _group_codes replaces: (group key of each unit, each group's first
    op and the params of its model's Eval), a model evaluated once per (name, args, perf_meta)."""
    from perfreport.events import CPU_OP
    from perfreport.tables.ops import category

    cache, first, keys = {}, {}, []
    for op, name, ks, cls in collect_units(tree):
        if cls is not None:
            m = op.perf_meta
            ck = (name, id(op.args), repr(sorted(m.items())) if m else "")
            if ck not in cache:
                e = Eval(cls, op)
                cache[ck] = (e, repr(e.params))
            e, params = cache[ck]
            key = (name, id(op.args), params, e.reason)
        else:
            e = None
            cat = "unlinked" if op is None else None if op.cat == CPU_OP else category(op, ks)
            key = (name, id(op.args) if op is not None else 0, None, cat)
        first.setdefault(key, (op, e and e.params))
        keys.append(key)
    return keys, first


def test_group_codes_group_as_the_unit_loop(tmp_path):
    from pathlib import Path

    from perfreport.tables.perf_groups import _group_codes
    from perfreport.tables.perf_units import linked_units

    fix = Path(__file__).resolve().parents[2] / "fixtures"
    trees = [load_tree(str(fix / f"{n}.json.gz")) for n in ("serving_inductor", "sglang_tiny_graph", "cpu_block")]
    for tree in trees + [_trace(tmp_path, [10, 100, 10, 100])]:
        keys, first = _group_loop(tree)
        gid, groups, modelled = _group_codes(linked_units(tree), [g for g in tree.gpu if g.launcher is None])
        seen: dict = {}
        assert gid.tolist() == [seen.setdefault(k, len(seen)) for k in keys]  # (as the loop groups them)
        drop = [(k[0], k[2], k[3]) for k in groups]  # (an argument set: its code here, its id there)
        assert drop == [(k[0], k[2], k[3]) for k in first]
        assert [(g.op0, g.ev and g.ev.params) for g in groups.values()] == list(first.values())
        assert [g.ix for g in groups.values()] == list(range(len(groups)))
        assert modelled.tolist() == [cls is not None for cls in linked_units(tree)[3]]
