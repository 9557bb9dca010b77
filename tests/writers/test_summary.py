"""One coverage statement: the console summary, the notes sheet, the HTML page, the JSON outputs
and ``Report.notes`` all state the figures of ``report.coverage``, and no second, differently
worded coverage line (the old ``roofline coverage: ...`` note) appears anywhere."""

from __future__ import annotations

import html
import io
import re

import openpyxl
import orjson
import pytest
from rich.console import Console

from perfreport.writers.console import print_summary
from perfreport.writers.summary import coverage_lines
from perfreport.writers.text import print_sheet
from tests.conftest import FIX
from tests.kit.cached import analyzed

PCT = re.compile(r"(\d+\.\d)%")


def _outputs(rep, tmp_path) -> dict[str, str]:
    con = Console(file=io.StringIO(), width=400)
    print_summary(rep, con)
    rep.to_excel(tmp_path / "r.xlsx")
    wb = openpyxl.load_workbook(tmp_path / "r.xlsx", read_only=True)
    notes = "\n".join(f"{a}: {b}" for a, b in wb["notes"].iter_rows(min_row=2, values_only=True))
    wb.close()
    rep.to_html(tmp_path / "r.html")
    page = html.unescape((tmp_path / "r.html").read_text(encoding="utf-8"))
    sheet_json = io.StringIO()
    print_sheet(rep.sheet("unified_perf_summary"), "json", stream=sheet_json, coverage=rep.coverage)
    return {
        "console": con.file.getvalue(),
        "notes sheet": notes,
        "html": page,
        "sheet json": sheet_json.getvalue(),
        "report json": rep.to_json(),
    }


@pytest.mark.parametrize("name", ["h100_qwen_0.5b.json.gz", "vllm_decode_graph.json.gz"])
def test_every_output_states_the_same_coverage_once(name, tmp_path):
    rep = analyzed(str(FIX / name))
    cov = rep.coverage
    head = coverage_lines(rep)[0]
    # the headline's figures are the Coverage object's, worked out from its µs parts
    assert PCT.findall(head) == [
        f"{cov.pct(x):.1f}" for x in (cov.modelled_us, cov.communication_us, cov.memcpy_us, cov.unmodelled_total_us)
    ]
    assert cov.text().startswith(head)
    out = _outputs(rep, tmp_path)
    for where, text in out.items():
        assert "roofline coverage" not in text, where  # the duplicate is gone everywhere
    for where in ("console", "notes sheet", "html"):
        assert out[where].count(head) == 1, where  # the headline, once, word for word
        assert out[where].count("coverage: unmodelled by reason") == 1, where
    for where in ("sheet json", "report json"):
        doc = orjson.loads(out[where])
        assert doc["coverage"] == orjson.loads(orjson.dumps(cov.to_dict())), where
        assert f"modelled {doc['coverage']['modelled (%)']:.1f}%" in head
    # Report.notes carry the same lines (not a rewording), and the sheets no coverage note
    assert [n for n in rep.notes if "coverage" in n] == coverage_lines(rep)
    assert not [n for s in rep.sheets for n in s.notes if "coverage" in n]


def test_graph_replay_hint_is_part_of_the_statement():
    rep = analyzed(str(FIX / "vllm_decode_graph.json.gz"))
    by_reason = coverage_lines(rep)[1]
    # the replay is 10,388.5 of 10,717.7 µs = 96.9%; the hint sits beside its share
    assert "graph replay without shapes 96.9% (10,388.5 µs; give --graph-capture)" in by_reason
    assert rep.coverage.to_dict()["hints"] == {"graph replay without shapes": "give --graph-capture"}
    with_capture = analyzed(str(FIX / "vllm_decode_graph.json.gz"), graph_capture=str(FIX / "vllm_decode_capture"))
    assert "--graph-capture" not in " ".join(coverage_lines(with_capture))
