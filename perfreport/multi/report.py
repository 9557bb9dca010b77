"""The merged multi-rank report: a :class:`~perfreport.report.Report` that also keeps, per rank,
what the self-audit and the HTML page need (flagged rows, roofline-chart points, trace path)."""

from __future__ import annotations

from msgspec import field
from pathlib import Path
from typing import Any

from perfreport.report import Report


class MultiReport(Report):
    """``coverage`` is a :class:`~perfreport.multi.coverage.RankCoverage`; ``rank_audits``:
    rank -> {"notes", "rows", "count"} of that rank's audit; ``rank_points``: rank -> its
    unified rows with FLOP/byte and TFLOP/s; ``chart_spec``: the spec the chart's ceilings use
    (``--arch``, else the lowest rank's); ``left_out``: the traces ``--keep-going`` left out."""

    rank_audits: dict = field(default_factory=dict)
    rank_points: dict = field(default_factory=dict)
    rank_paths: dict = field(default_factory=dict)
    chart_spec: Any = None
    left_out: list = field(default_factory=list)  # "path: problem" of the traces --keep-going skipped

    def to_html(self, path: str | Path, top: int = 50) -> Path:
        """One page for the merged report (:mod:`perfreport.writers.html_ranks`)."""
        from perfreport.writers.html_ranks import write_ranks_html

        self._refuse_input(path)
        return write_ranks_html(self, path, top)


__all__ = ["MultiReport"]
