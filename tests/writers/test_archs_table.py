"""writers/archs_table.py: one row per GPU spec, its figures in the columns named, blank where
the part has no such path; the full names under the table."""

from __future__ import annotations

from rich.console import Console

from perfreport.specs import list_archs
from perfreport.writers.archs_table import ARCHS_COLUMNS, archs_table


def _text(specs) -> str:
    c = Console(width=120, record=True)
    c.print(archs_table(specs))
    return c.export_text()


def test_a_row_per_spec_with_its_figures_and_blanks():
    specs = list_archs()
    t = archs_table(specs)
    assert [c.header for c in t.columns] == ["key", *(h for h, _ in ARCHS_COLUMNS)]
    assert t.row_count == len(specs)
    h100 = next(s for s in specs if s.key == "h100_sxm")
    row = next(line for line in _text(specs).splitlines() if line.strip().startswith("h100_sxm "))
    assert f"{h100.mem_bw_tbps:g}" in row and f"{h100.peaks['matrix_bf16']:g}" in row
    assert "matrix_fp4" not in h100.peaks  # Hopper has no FP4 path: that cell is blank
    cells = row.split()
    assert len(cells) < len(ARCHS_COLUMNS) + 1


def test_the_caption_names_every_gpu_and_the_json_view():
    specs = list_archs()
    out = _text(specs)
    for s in specs:
        assert f"{s.key}" in out and s.name in out
    assert "perfreport archs --json" in out
