"""multi/report.py: the merged report keeps each rank's audit, chart points and trace path; its
HTML page refuses to overwrite a rank's trace."""

from __future__ import annotations

import pytest

from perfreport.errors import BadInput
from perfreport.multi import analyze_ranks
from perfreport.multi.report import MultiReport
from tests.multi.rank_fragments import write_fragments


@pytest.fixture(scope="module")
def merged(tmp_path_factory):
    d = tmp_path_factory.mktemp("mr")
    paths = write_fragments(d / "run", 2)
    return paths, analyze_ranks(str(d / "run"), engine="serial")


def test_per_rank_fields(merged):
    paths, rep = merged
    assert isinstance(rep, MultiReport)
    assert sorted(rep.rank_paths) == [0, 1] and sorted(rep.rank_paths.values()) == sorted(str(p) for p in paths)
    assert set(rep.rank_audits) == {0, 1} and all(
        {"notes", "rows", "count"} <= set(a) for a in rep.rank_audits.values()
    )
    assert set(rep.rank_points) == {0, 1}
    assert rep.left_out == []


def test_the_page_is_written_and_never_over_a_rank_trace(merged, tmp_path):
    paths, rep = merged
    out = rep.to_html(tmp_path / "ranks.html")
    assert out.read_text(encoding="utf-8").lstrip().lower().startswith("<!doctype html")
    before = paths[0].read_bytes()
    with pytest.raises(BadInput, match="refusing to overwrite an input"):
        rep.to_html(paths[0])
    assert paths[0].read_bytes() == before
