"""Capture regions in SGLang's layout (no annotation per batch size) and in vLLM's.

``fixtures/sglang_tiny_capture/capture.json.gz`` (scripts/capture_graph_fixtures.py: a real
CPU profiler run of a 2-layer stand-in decode model in SGLang's capture order, runtime calls
spliced in) captures batch sizes 16, 8, 4 (reversed ``capture_bs``), each after two eager
warm-up forwards; a forward launches 14 kernels (embedding gather, per layer q/k/v GEMMs,
``sglang::store_cache``, output GEMM, residual add; the LM head GEMM).
"""

from __future__ import annotations

import pytest

from perfreport.errors import BadInput
from perfreport.tree.capture_regions import SGLANG, VLLM, find_regions, pick_region
from perfreport.tree.graph_capture import load_capture
from tests.conftest import FIX

CAPTURE = FIX / "sglang_tiny_capture"


@pytest.fixture(scope="module")
def found():
    ct, ann = load_capture(CAPTURE)
    assert ann is None
    return ct, find_regions(ct)


def test_one_region_per_begin_end_pair_largest_first(found):
    ct, f = found
    assert f.layout == SGLANG and not f.notes
    assert [r.batch_size for r in f.regions] == [16, 8, 4]
    assert [r.name for r in f.regions] == ["capture 1/3 (bs=16)", "capture 2/3 (bs=8)", "capture 3/3 (bs=4)"]
    for r in f.regions:
        assert len(r.nodes) == 14 and not any(n.kernels for n in r.nodes)
        assert all(r.t0 <= n.ts <= r.t1 for n in r.nodes)
        # the GEMMs of this region were recorded at its batch size
        mms = [o for o in r.ops if o.name == "aten::mm"]
        assert len(mms) == 9 and {o.args["Input Dims"][0][0] for o in mms} == {r.batch_size}


def test_eager_warm_up_launches_are_excluded(found):
    ct, f = found
    # 3 sizes x 2 warm-up forwards x 14 launches, each with its own kernel in the capture
    ((why, n),) = f.excluded.items()
    assert n == 3 * 2 * 14 and "warm-up" in why
    nodes = {id(n) for r in f.regions for n in r.nodes}
    ran = [o for o in ct.ops if o.name == "hipLaunchKernel" and o.kernels]
    assert len(ran) == 84 and not any(id(o) in nodes for o in ran)


@pytest.mark.parametrize(
    "tokens, bs, how",
    [
        (5, 8, "replay bs=5 padded to captured bs=8"),
        (8, 8, "replay bs=8 = captured bs"),
        (1, 4, "replay bs=1 padded to captured bs=4"),
        (9, 16, "replay bs=9 padded to captured bs=16"),
    ],
)
def test_replay_takes_its_padded_batch_size(found, tokens, bs, how):
    region, got, problems = pick_region(found[1].regions, 14, tokens)
    assert (region.batch_size, got, problems) == (bs, how, [])


def test_beyond_the_largest_size_or_unknown_falls_back_to_node_count(found):
    regions = found[1].regions
    region, how, problems = pick_region(regions, 14, 17)
    assert region is regions[0] and how == "by node count"
    assert problems[0] == "replay bs=17 exceeds every captured size [4, 8, 16]"
    region, how, _ = pick_region(regions, 14, None)
    assert how == "by node count (batch size unknown)"
    assert pick_region(regions, 15, None)[0] is None


def test_vllm_capture_keeps_its_layout():
    ct, ann = load_capture(FIX / "vllm_decode_capture")
    f = find_regions(ct, ann)
    assert f.layout == VLLM and [r.name for r in f.regions] == ["capture_32_FULL"]
    assert f.regions[0].batch_size == 32 and len(f.regions[0].nodes) == 421
    assert find_regions(ct).layout == VLLM  # found by its capture_* name alone


def test_a_capture_of_neither_layout_is_one_clear_error():
    path = FIX / "cpu_block.json.gz"
    with pytest.raises(BadInput) as e:
        load_capture(path)
    assert str(path) in str(e.value) and "matches no capture layout" in str(e.value)


def test_per_size_file_of_the_scheduled_profiler():
    # SGLANG_GRAPH_BATCH_CAPTURE: one file per size holding the captured forward only, inside
    # the profiler's own ProfilerStep#<n> annotation (not a vLLM capture region)
    ct, ann = load_capture(FIX / "sglang_tiny_capture_per_bs" / "DecodeCudaGraphRunner_bs_16_rank0.json.gz")
    assert ann is None and any(o.name.startswith("ProfilerStep#") for o in ct.ops)
    f = find_regions(ct)
    assert f.layout == SGLANG and [(r.batch_size, len(r.nodes)) for r in f.regions] == [(16, 14)]
    assert f.excluded == {}  # the warm-ups were not recorded


def test_load_and_merge_share_one_region_search(monkeypatch):
    """load_capture checks the layout and merge_graph_capture uses the regions: one search."""
    from perfreport.tree import capture_regions as cr

    calls = []
    real = cr._find_regions
    monkeypatch.setattr(cr, "_find_regions", lambda ct, ann: calls.append(ann) or real(ct, ann))
    ct, ann = load_capture(str(FIX / "sglang_tiny_capture"))
    assert cr.find_regions(ct, ann) is cr.find_regions(ct, ann)
    assert calls == [None]


def test_capture_directory_errors_name_the_directory_and_the_problem(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(BadInput, match="no .json/.json.gz capture trace in the directory") as e:
        load_capture(str(empty))
    assert str(empty) in str(e.value)
    two = tmp_path / "two"
    two.mkdir()
    for n in ("a.json", "b.json.gz"):
        (two / n).write_bytes(b"{}")
    with pytest.raises(BadInput, match="2 trace files that are not one rank's .*: name the file"):
        load_capture(str(two))
