"""Per-rank comm/compute overlap (perfreport/multi/overlap.py): hand values, and rank 0 of the PARAM
DLRM step against intervals computed here from the raw JSON."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from perfreport.multi import analyze_ranks
from perfreport.multi.overlap import comm_overlap, rank_comm_overlap

RANK0 = Path(__file__).resolve().parents[2] / "fixtures/corpus/param/dlrm_worker0_step_12.1694128201545.json.gz"


def test_hand_values():
    assert comm_overlap(10.0, 4.0) == pytest.approx(60.0)  # 6 of 10 ms under computation
    assert comm_overlap(10.0, 10.0) == 0.0 and comm_overlap(10.0, 0.0) == 100.0
    assert comm_overlap(0.0, 0.0) is None
    rows = [[0, "communication", 4.0, 0], [0, "exposed comm", 1.0, 0], [1, "communication", 6.0, 0]]
    rows += [[1, "exposed comm", 5.0, 0], [0, "computation", 9.0, 0]]
    got = rank_comm_overlap(rows)  # (4 - 1) + (6 - 5) = 4 of 10 ms
    assert got == {"communication (ms)": 10.0, "overlapped comm (ms)": 4.0, "comm overlapped (%)": 40.0}


def _union(iv):
    out = []
    for s, e in sorted(iv):
        if out and s <= out[-1][1]:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e])
    return out


def _intersection(a, b):
    i = j = 0
    tot = 0.0
    while i < len(a) and j < len(b):
        lo, hi = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
        tot += max(0.0, hi - lo)
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return tot


def test_rank0_of_the_dlrm_step(tmp_path):
    evs = json.loads(gzip.open(RANK0).read())["traceEvents"]
    comm, comp = [], []
    for e in evs:
        if e.get("ph") != "X" or e.get("cat") not in ("kernel", "gpu_memset"):
            continue
        (comm if e["name"].startswith("nccl") else comp).append((e["ts"], e["ts"] + e["dur"]))
    cu, pu = _union(comm), _union(comp)
    c = sum(e - s for s, e in cu)
    want = 100.0 * _intersection(cu, pu) / c
    rep = analyze_ranks([str(RANK0)], jobs=1)
    row = rep.sheet("ranks").records()[0]
    assert row["communication (ms)"] == pytest.approx(c / 1000.0)
    assert row["comm overlapped (%)"] == pytest.approx(want)
    assert 0.0 < want < 100.0
