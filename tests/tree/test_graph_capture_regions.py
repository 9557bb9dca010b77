"""A capture file holding several batch-size regions: the replay picks its own batch size."""

from __future__ import annotations

import copy
import gzip
import json
from pathlib import Path

import pytest

from perfreport.pipeline import load_tree
from perfreport.tree.graph_capture import region_batch_size

FIX = Path(__file__).resolve().parents[2] / "fixtures"
REPLAY = FIX / "vllm_decode_graph.json.gz"  # step execute_32_...: 32 tokens


def _two_region_capture(tmp_path: Path) -> Path:
    """The real capture with its capture_32_FULL region copied earlier as capture_16_FULL
    (same 421 graph nodes and kernel names, new correlation ids): two regions that node
    counts cannot tell apart, the wrong one first in time."""
    src = next((FIX / "vllm_decode_capture").glob("*.json.gz"))
    doc = json.loads(gzip.decompress(src.read_bytes()))
    evs = doc["traceEvents"]
    (ann,) = [e for e in evs if e.get("cat") == "user_annotation" and e.get("name") == "capture_32_FULL"]
    lo, hi = ann["ts"], ann["ts"] + ann["dur"]
    shift = (hi - lo) + 1000.0
    copies = []
    for e in evs:
        if e.get("ph") == "X" and lo <= e.get("ts", -1) <= hi and e.get("pid") == ann["pid"]:
            c = copy.deepcopy(e)
            c["ts"] = e["ts"] - shift
            if c.get("name") == "capture_32_FULL":
                c["name"] = "capture_16_FULL"
            a = c.get("args") or {}
            if "correlation" in a:
                a["correlation"] += 10_000_000
            copies.append(c)
    doc["traceEvents"] = evs + copies
    out = tmp_path / "two_regions.json.gz"
    out.write_bytes(gzip.compress(json.dumps(doc).encode()))
    return out


def test_region_batch_size_names():
    assert region_batch_size("capture_32_FULL") == 32
    assert region_batch_size("cuda_graph bs=8") == 8
    assert region_batch_size("warmup") is None


def test_replay_takes_the_region_of_its_batch_size(tmp_path):
    cap = _two_region_capture(tmp_path)
    tree = load_tree(str(REPLAY), graph_capture=str(cap))
    rep = tree.graph_capture
    assert sorted(rep.regions) == ["capture_16_FULL", "capture_32_FULL"]
    (m,) = rep.launches
    assert m.region == "capture_32_FULL" and m.matched == 421 and m.names_verified
    assert not any("capture regions have" in p for p in m.problems)


# ---- SGLang layout, end to end (scripts/capture_graph_fixtures.py) ------------------------------
SGL_REPLAY = FIX / "sglang_tiny_graph.json.gz"  # step[DECODE bs=5], one hipGraphLaunch
SGL_CAPTURE = FIX / "sglang_tiny_capture"  # sizes 16, 8, 4 in one capture file


def test_sglang_replay_takes_the_padded_region_and_reports_it():
    tree = load_tree(str(SGL_REPLAY), graph_capture=str(SGL_CAPTURE))
    rep = tree.graph_capture
    assert rep.layout == "SGLang" and len(rep.regions) == 3
    (m,) = rep.launches
    assert (m.region, m.matched, m.events, m.names_verified) == ("capture 2/3 (bs=8)", 14, 14, True)
    assert m.choice == "replay bs=5 padded to captured bs=8" and not m.problems
    assert tree.graph_capture_summary == (
        "graph capture: 14/14 kernels attributed to 14 ops from capture 2/3 (bs=8) (SGLang capture layout)"
    )
    assert any("replay bs=5 padded to captured bs=8" in line for line in rep.lines())


def test_sglang_replay_rows_carry_shapes_flops_and_full_coverage():
    from perfreport.pipeline import analyze

    rep = analyze(str(SGL_REPLAY), graph_capture=str(SGL_CAPTURE))
    rows = rep.sheet("unified_perf_summary").records()
    total = sum(r["time sum (µs)"] for r in rows)
    covered = sum(r["time sum (µs)"] for r in rows if r.get("roofline time (µs)") is not None)
    # 14 kernels: gather 2 + 9 GEMMs x 6 + 2 stores x 1.5 + 2 adds x 1 = 61 µs, all modelled
    assert total == pytest.approx(61.0) and covered / total > 0.90
    by = {(r["name"], r["input dims"]): r for r in rows}
    # the shapes are the capture's at bs=8 (5 requests padded): GEMM FLOPs = 2·M·K·N
    assert by[("aten::mm", "(8, 64), (64, 64)")]["GFLOP"] * 1e9 == pytest.approx(2 * 8 * 64 * 64)  # 65,536
    assert by[("aten::mm", "(8, 64), (64, 32)")]["GFLOP"] * 1e9 == pytest.approx(2 * 8 * 64 * 32)  # 32,768
    assert by[("aten::mm", "(8, 64), (64, 128)")]["GFLOP"] * 1e9 == pytest.approx(2 * 8 * 64 * 128)  # 131,072
    assert by[("aten::mm", "(8, 64), (64, 64)")]["count"] == 4  # q and o of 2 layers
    st = by[("sglang::store_cache", "(8, 32), (8, 32), (64, 32), (64, 32), (8), (), (), ()")]
    # k, v [8, 32] bf16: 512 elements written (1 FLOP each); bytes = read 512·2 + written
    # 512·2 (bf16 cache rows) + indices 8·8 = 2112
    assert st["GFLOP"] * 1e9 == pytest.approx(512) and st["data moved (MB)"] * 1e6 == pytest.approx(2112)


def test_a_capture_of_neither_layout_fails_in_one_line(tmp_path):
    import subprocess
    import sys

    bad = FIX / "cpu_block.json.gz"
    p = subprocess.run(
        [
            sys.executable,
            "-m",
            "perfreport",
            "analyze",
            str(SGL_REPLAY),
            "--graph-capture",
            str(bad),
            "-o",
            str(tmp_path / "r.xlsx"),
        ],
        capture_output=True,
        text=True,
        cwd=FIX.parent,
    )
    assert p.returncode != 0 and "Traceback" not in p.stderr
    (line,) = p.stderr.strip().splitlines()
    assert str(bad) in line and "matches no capture layout" in line
    assert not (tmp_path / "r.xlsx").exists()


def test_sglang_per_size_files_the_replay_takes_its_padded_size():
    from perfreport.tree.graph_capture import load_capture

    d = FIX / "sglang_tiny_capture_per_bs"
    trees, ann = load_capture(d)
    assert ann is None and [Path(str(t.source)).name for t in trees] == [
        f"DecodeCudaGraphRunner_bs_{bs}_rank0.json.gz" for bs in (16, 8, 4)
    ]
    tree = load_tree(str(SGL_REPLAY), graph_capture=str(d))
    rep = tree.graph_capture
    (m,) = rep.launches
    assert m.region == "DecodeCudaGraphRunner_bs_8_rank0.json.gz: capture 1/1 (bs=8)"
    assert (m.matched, m.choice, rep.layout, rep.excluded) == (14, "replay bs=5 padded to captured bs=8", "SGLang", {})
    # the 9 GEMMs that now own a graph kernel carry the bs-8 file's shapes
    mms = [o for o in tree.ops if o.name == "aten::mm" and o.kernels]
    assert len(mms) == 9 and {o.args["Input Dims"][0][0] for o in mms} == {8}


def test_a_folder_of_unrelated_traces_is_refused(tmp_path):
    import shutil
    from perfreport.errors import BadInput
    from perfreport.tree.graph_capture import load_capture

    for name in ("a.json.gz", "b.json.gz"):
        shutil.copy(FIX / "sglang_tiny_capture" / "capture.json.gz", tmp_path / name)
    with pytest.raises(BadInput, match="name the file"):
        load_capture(tmp_path)
