"""tables/kernel_codes.py: codes found per distinct value read the same as the loop event by
event that they replace (kinds, (name, stream) keys, overlap lookups), on the tree's columns and
on records holding their own values."""

from __future__ import annotations

import numpy as np

from perfreport.events import GpuEvent
from perfreport.pipeline import load_tree
from perfreport.tables.kernel_codes import dense_codes, first_codes, first_seen, kinds, looked_up, name_stream_codes
from perfreport.tables.op_times import shared
from perfreport.tables.perf_groups import _kind
from tests.kit import X, write_trace


def _tree(tmp_path):
    ev = [
        X("cpu_op", "aten::mm", 0, 500),
        X("cuda_runtime", "cudaLaunchKernel", 10, 4, correlation=1),
        X("cuda_runtime", "cudaMemcpyAsync", 20, 4, correlation=2),
        X("cuda_runtime", "cudaLaunchKernel", 30, 4, correlation=3),
        X("cuda_runtime", "cudaLaunchKernel", 40, 4, correlation=4),
        X("kernel", "gemm", 100, 20, pid=0, tid=7, device=0, stream=7, correlation=1),
        X("gpu_memcpy", "Memcpy HtoD (Pageable -> Device)", 130, 5, pid=0, tid=7, device=0, stream=7, correlation=2),
        X("kernel", "ncclDevKernel_AllReduce", 140, 9, pid=1, tid=9, device=1, stream=7, correlation=3),
        X("kernel", "gemm", 160, 3, pid=0, tid=8, device=0, stream=8, correlation=4),
        X("kernel", "gemm", 170, 1, pid=0, tid=7, device=0, stream=7, correlation=99),
    ]
    return load_tree(write_trace(tmp_path, ev))


def _records(events):
    """The events as records holding their own values (the one-by-one path)."""
    return [GpuEvent(g.uid, g.name, g.cat, g.device, g.stream, g.ts, g.dur, g.correlation) for g in events]


def _loop(events):
    """The per-event loop the codes replace: kind by (name, cat), code by (name, stream)."""
    nsk: dict = {}
    code = [nsk.setdefault((g.name, g.stream), len(nsk)) for g in events]
    return [_kind(g) for g in events], [list(nsk)[c] for c in code]


def test_codes_read_as_the_event_loop(tmp_path):
    gpu = _tree(tmp_path).gpu
    for events in (gpu, _records(gpu), gpu[::-1]):
        name_code, names = first_codes([g.name for g in events])
        with shared(events):
            code, keys = name_stream_codes(events, name_code, names)
        kind = kinds(events, name_code, len(names), _kind)
        want_kind, want_keys = _loop(events)
        assert kind.tolist() == want_kind
        assert [keys[c] for c in code.tolist()] == want_keys
        assert len(set(keys)) == len(keys)  # one code per (name, stream)


def test_first_codes_number_by_first_appearance():
    code, distinct = first_codes(["b", "a", "b", "c", "a"])
    assert code.tolist() == [0, 1, 0, 2, 1] and distinct == ["b", "a", "c"]


def test_dense_codes_both_ways():
    key = np.array([7, 3, 7, 1_000_000, 3])
    for m in (1_000_001, 10**12):  # the table and the sort
        code, distinct = dense_codes(key, m)
        assert distinct.tolist() == [3, 7, 1_000_000] and code.tolist() == [1, 0, 1, 2, 0]


def test_looked_up_is_dict_get():
    table = {5: 1.5, 2: 0.25, 9: 3.0}
    uid = np.array([2, 3, 9, 9, 0, 11])
    at, vals = looked_up(uid, table)
    want = [(i, table[u]) for i, u in enumerate(uid.tolist()) if table.get(u) is not None]
    assert list(zip(at.tolist(), vals.tolist())) == want
    assert looked_up(uid, {})[0].size == 0 and looked_up(uid[:0], table)[0].size == 0


def test_first_seen_numbers_keys_as_a_dict_filled_key_by_key():
    rng = np.random.default_rng(5)
    wide = [(rng.integers(0, 6, 50) * 10**12 - 7).tolist() for _ in range(5)]  # (the np.unique path)
    for key in [[], [7], [3, 3, -1, 3, 9, -1]] + [rng.integers(-5, 50, 80).tolist() for _ in range(10)] + wide:
        seen: dict = {}
        want = [seen.setdefault(k, len(seen)) for k in key]
        code, first = first_seen(np.asarray(key, dtype=np.int64))
        assert code.tolist() == want and first.tolist() == [key.index(k) for k in seen]


def test_event_codes_are_made_once_while_shared(tmp_path, monkeypatch):
    from perfreport.tables import kernel_codes

    tree = _tree(tmp_path)
    calls = []
    real = kernel_codes.listed_codes
    monkeypatch.setattr(kernel_codes, "listed_codes", lambda e, a: calls.append(a) or real(e, a))
    with shared(tree.gpu):
        a = kernel_codes.event_codes(tree.gpu, "name")
        assert kernel_codes.event_codes(tree.gpu, "name") is a and calls == ["name"]
    kernel_codes.event_codes(tree.gpu, "name")
    assert calls == ["name", "name"]  # closed: made afresh
    code, names = a
    assert [names[c] for c in code.tolist()] == [g.name for g in tree.gpu]


def test_listed_codes_across_chunks(tmp_path, monkeypatch):
    """Chunk by chunk (values new in a later chunk numbered after the earlier ones) as at once."""
    from perfreport.tables import kernel_codes

    tree = _tree(tmp_path)
    want = first_codes([g.name for g in tree.gpu])
    for chunk in (1, 2, 3, 64):
        monkeypatch.setattr(kernel_codes, "CHUNK", chunk)
        code, names = kernel_codes.listed_codes(tree.gpu, "name")
        assert code.tolist() == want[0].tolist() and names == want[1]
        code, cats = kernel_codes.listed_codes(tree.gpu, "device")  # (a property: read by attrgetter)
        assert [cats[c] for c in code.tolist()] == [g.device for g in tree.gpu]


def test_positions_by_uid(tmp_path):
    from perfreport.tables.kernel_codes import positions_by_uid

    tree = _tree(tmp_path)
    pos = positions_by_uid(tree.gpu)
    for i, g in enumerate(tree.gpu):
        assert pos[g.uid] == i
    assert sorted(set(range(len(pos))) - {g.uid for g in tree.gpu}) == [i for i, p in enumerate(pos) if p < 0]
    assert positions_by_uid(_records(tree.gpu[:1]) + tree.gpu[1:]) is None  # not all from the columns
