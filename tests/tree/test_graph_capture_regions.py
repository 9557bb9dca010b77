"""A capture file holding several batch-size regions: the replay picks its own batch size."""
from __future__ import annotations

import copy
import gzip
import json
from pathlib import Path

from perfreport.pipeline import load_tree
from perfreport.tree.graph_capture import region_batch_size

FIX = Path(__file__).resolve().parents[2] / "fixtures"
REPLAY = FIX / "vllm_decode_graph.json.gz"      # step execute_32_...: 32 tokens


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
