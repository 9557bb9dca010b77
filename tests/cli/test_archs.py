"""cli/archs.py: ``perfreport archs`` lists every built-in GPU spec, as JSON or a table."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from perfreport.cli.app import app
from perfreport.specs import list_archs


def test_json_lists_every_spec_with_its_peaks():
    r = CliRunner().invoke(app, ["archs", "--json"])
    assert r.exit_code == 0, r.output
    got = json.loads(r.stdout)
    specs = list_archs()
    assert [g["key"] for g in got] == [s.key for s in specs]
    assert {"key", "name", "mem_bw_tbps", "peaks_tflops"} <= set(got[0])
    by_key = {g["key"]: g for g in got}
    for s in specs:
        assert by_key[s.key]["mem_bw_tbps"] == s.mem_bw_tbps and by_key[s.key]["peaks_tflops"] == s.peaks


def test_the_table_names_every_spec():
    r = CliRunner().invoke(app, ["archs"])
    assert r.exit_code == 0, r.output
    for s in list_archs():
        assert s.key in r.stdout
