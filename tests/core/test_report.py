"""perfreport.analyze / Report: the API the CLI is a layer over."""

import json
import os
from pathlib import Path

import pytest

import perfreport
from perfreport.errors import BadInput
from tests.kit.cached import analyzed

FIX = Path(__file__).resolve().parents[2] / "fixtures"
H100 = FIX / "h100_qwen_0.5b.json.gz"


@pytest.fixture(scope="module")
def report():
    return analyzed(H100)


def test_sheet_lookup_exact_prefix_and_errors(report):
    assert report.sheet("gpu_timeline").name == "gpu_timeline"
    assert report.sheet("unified").name == "unified_perf_summary"
    with pytest.raises(KeyError, match="matches ops_summary"):
        report.sheet("ops_")  # ops_summary, ops_summary_by_category, ops_unique_args
    with pytest.raises(KeyError, match="no sheet 'nope'"):
        report.sheet("nope")


def test_to_pandas_matches_rows(report):
    sh = report.sheet("unified_perf_summary")
    df = sh.to_pandas()
    assert list(df.columns) == sh.columns and len(df) == len(sh.rows)


def test_file_object_equals_path(report):
    with open(H100, "rb") as fh:
        again = perfreport.analyze(fh)
    a = report.sheet("unified_perf_summary").rows
    b = again.sheet("unified_perf_summary").rows
    assert [r[:6] for r in a] == [r[:6] for r in b]


def test_json_round_trip(report, tmp_path):
    text = report.to_json(tmp_path / "r.json")
    doc = json.loads((tmp_path / "r.json").read_text())
    assert doc == json.loads(text)
    assert doc["spec"] == report.spec.key
    assert len(doc["sheets"]["kernel_summary"]["rows"]) == len(report.sheet("kernel_summary").rows)


def test_arch_name_and_bad_basis():
    r = perfreport.analyze(H100, arch="mi300x")
    assert r.spec.key == "mi300x" and "from --arch" in r.arch_msg
    with pytest.raises(BadInput, match="basis"):
        perfreport.analyze(H100, basis="typical")


def test_no_spec_names_the_device_seen(tmp_path):
    # deviceProperties of a GPU we have no spec for: the note says which device it saw
    import gzip

    doc = json.loads(gzip.open(H100).read())
    doc["deviceProperties"] = [{"id": 0, "name": "Imaginary GPU 9000"}]
    p = tmp_path / "t.json"
    p.write_text(json.dumps(doc))
    r = perfreport.analyze(p)
    assert r.spec is None and "Imaginary GPU 9000" in r.arch_msg


def test_base_bounds_add_assumption_deltas():
    from perfreport.models.base import Assumption, PerfModel, bounds

    class M(PerfModel):
        def assumptions(self):
            return [
                Assumption("experts", bytes_min=60.0, bytes_max=300.0),
                Assumption("cache hit", bytes_min=80.0, bytes_max=100.0, flops_min=5.0, flops_max=10.0),
            ]

    # point: 10 FLOP, 100 B. deltas: experts -40/+200, cache -20/+0 -> bytes 40 .. 300; flops 5 .. 10
    assert bounds(M(None), 10.0, 100.0) == (5.0, 10.0, 40.0, 300.0)
    assert bounds(PerfModel(None), 10.0, 100.0) == (10.0, 10.0, 100.0, 100.0)


def test_writers_refuse_to_replace_the_reports_own_input(tmp_path):
    """Report.to_excel / to_html / to_json / to_csv_dir never overwrite the trace it was read from."""
    import shutil

    trace = tmp_path / "t.json.gz"
    shutil.copy(H100, trace)
    before = trace.read_bytes()
    rep = perfreport.analyze(str(trace))
    for write in (rep.to_excel, rep.to_html, rep.to_json):
        with pytest.raises(BadInput, match="refusing to overwrite an input"):
            write(trace)
    os.link(trace, tmp_path / "hard.xlsx")
    with pytest.raises(BadInput, match="refusing to overwrite an input"):
        rep.to_excel(tmp_path / "hard.xlsx")
    assert trace.read_bytes() == before


def test_no_spec_says_which_are_close_and_how_to_pass_arch(tmp_path):
    # DGX-2's V100 SXM3 has no spec: the note names the V100 specs and the --arch to pass
    import gzip

    doc = json.loads(gzip.open(H100).read())
    doc["deviceProperties"] = [{"id": 0, "name": "Tesla V100-SXM3-32GB", "numSms": 80}]
    p = tmp_path / "t.json"
    p.write_text(json.dumps(doc))
    r = perfreport.analyze(p)
    assert r.spec is None and "Tesla V100-SXM3-32GB" in r.arch_msg
    assert "closest built-in specs: v100_pcie, v100_sxm2, v100s_pcie" in r.arch_msg
    assert "--arch v100_pcie" in r.arch_msg and "perfreport archs" in r.arch_msg
