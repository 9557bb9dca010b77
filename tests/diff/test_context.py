"""perfreport diff states when A and B ran on different GPUs, world sizes or ranks (diff/context.py):
in the diff_context sheet, the report notes, the console summary and the JSON. On main before this
change the diff said nothing and printed a speedup as if the runs were comparable."""

from __future__ import annotations

import io
import json
from pathlib import Path

from rich.console import Console

import perfreport
from perfreport.diff import diff
from perfreport.diff.context import compare, from_notes
from perfreport.writers.diff_console import print_diff_summary

FIX = Path(__file__).resolve().parents[2] / "fixtures"
H100 = FIX / "h100_qwen_0.5b.json.gz"
MI300 = FIX / "mi300_qwen_0.5b.json.gz"
DLRM0 = FIX / "corpus/param/dlrm_worker0_step_12.1694128201545.json.gz"
DLRM1 = FIX / "corpus/param/dlrm_worker1_step_12.1694128201556.json.gz"


def _ctx(report):
    return {r["field"]: r for r in report.sheet("diff_context").records()}


def test_different_gpus_are_stated_in_the_sheet_notes_console_and_json(tmp_path):
    d = diff(str(H100), str(MI300))
    c = _ctx(d)
    assert (c["GPU"]["A"], c["GPU"]["B"], c["GPU"]["comparison"]) == (
        "NVIDIA H100 80GB HBM3",
        "AMD Instinct MI300X VF",
        "differs",
    )
    assert c["GPU spec"]["comparison"] == "differs" and c["rank"]["comparison"] == "unknown on both sides"
    assert d.notes[0] == "A and B differ in GPU: A NVIDIA H100 80GB HBM3, B AMD Instinct MI300X VF"
    buf = io.StringIO()
    print_diff_summary(d, Console(file=buf, width=200), top=3)
    head = buf.getvalue().splitlines()[:4]
    assert any("differ in GPU" in line for line in head) and any("not like for like" in line for line in head)
    doc = json.loads(d.to_json())
    assert doc["notes"][0].startswith("A and B differ in GPU")
    assert {r["field"]: r["comparison"] for r in doc["sheets"]["diff_context"]["rows"]}["GPU"] == "differs"


def test_different_ranks_of_one_job():
    d = diff(str(DLRM0), str(DLRM1))
    c = _ctx(d)
    assert (c["rank"]["A"], c["rank"]["B"], c["rank"]["comparison"]) == ("0", "1", "differs")
    assert (c["world size"]["A"], c["world size"]["comparison"]) == ("8", "same")
    assert c["GPU"]["comparison"] == "same"
    assert d.notes[0] == "A and B differ in rank: A 0, B 1"


def test_same_trace_states_nothing():
    d = diff(str(H100), str(H100))
    assert not any(n.startswith("A and B differ") for n in d.notes)
    assert _ctx(d)["GPU"]["comparison"] == "same"


def test_a_report_json_keeps_its_context(tmp_path):
    rep = perfreport.analyze(str(DLRM1))
    rep.to_json(tmp_path / "r1.json")
    got = from_notes(json.loads((tmp_path / "r1.json").read_text())["notes"])
    assert (got["GPU"], got["rank"], got["world size"]) == ("Tesla V100-SXM2-32GB", "1", "8")
    d = diff(str(DLRM0), str(tmp_path / "r1.json"))
    assert _ctx(d)["rank"]["comparison"] == "differs"


def test_world_size_differs_and_one_side_unknown():
    rows, warn = compare(
        {"GPU": "X", "GPU spec": None, "world size": "8", "rank": "0"},
        {"GPU": "X", "GPU spec": "h100_sxm", "world size": "16", "rank": "0"},
    )
    by = {r["field"]: r["comparison"] for r in rows}
    assert by == {"GPU": "same", "GPU spec": "unknown on A", "world size": "differs", "rank": "same"}
    assert warn[0] == "A and B differ in world size: A 8, B 16"
