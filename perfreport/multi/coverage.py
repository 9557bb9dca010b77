"""Coverage of a multi-rank run: each rank's statement and their sum.

Each worker sends back its rank's :class:`~perfreport.tables.coverage.Coverage` (as
``to_dict()``); :class:`RankCoverage` holds them by rank and their sum (every part added:
:func:`~perfreport.tables.coverage.merge_coverage`). It answers what the writers ask of a
report's ``coverage`` (``lines``, ``text``, ``to_dict``, ``modelled_pct``, ``basis``), so the
console, the notes sheet, the HTML page and the JSON outputs state the same figures, and
:meth:`RankCoverage.below` is what ``--min-coverage`` checks: every rank and the total.
"""

from __future__ import annotations

from perfreport.tables.coverage import Coverage, coverage_from_dict, merge_coverage


class RankCoverage:
    """``ranks``: rank -> its Coverage (sorted by rank); ``total``: their sum, over the ranks
    with GPU events (all ranks when none has any)."""

    def __init__(self, ranks: dict[int, Coverage]):
        self.ranks = dict(sorted(ranks.items()))
        gpu = [c for c in self.ranks.values() if c.basis == "GPU time"]
        n = len(gpu) if gpu else len(self.ranks)
        basis = "GPU time" if gpu else "CPU op time (no GPU events)"
        self.total = merge_coverage(
            gpu or list(self.ranks.values()), basis=f"{basis} over {n} rank{'s' if n != 1 else ''}"
        )

    @classmethod
    def from_results(cls, ranked) -> "RankCoverage | None":
        """From ``(rank, source, RankResult)`` triples; None when no rank sent a statement."""
        got = {rank: coverage_from_dict(r.coverage) for rank, _, r in ranked if r.coverage is not None}
        return cls(got) if got else None

    # -- what a report's coverage answers ----------------------------------------------
    @property
    def basis(self) -> str:
        return self.total.basis

    @property
    def modelled_pct(self) -> float:
        return self.total.modelled_pct

    def rank_line(self, rank: int) -> str:
        """That rank's headline (:meth:`Coverage.headline`), named for the rank."""
        return self.ranks[rank].headline(f"rank {rank}")

    def lines(self, shorten=None) -> list[str]:
        """The total's statement (headline, by reason, errors, top unmodelled), then one line per rank."""
        return self.total.lines(shorten=shorten) + [self.rank_line(r) for r in self.ranks]

    def text(self) -> str:
        return " | ".join(self.lines())

    def to_dict(self) -> dict:
        """The total's :meth:`Coverage.to_dict`, plus ``"ranks"``: rank (text) -> that rank's."""
        return self.total.to_dict() | {"ranks": {str(r): c.to_dict() for r, c in self.ranks.items()}}

    def below(self, pct: float) -> list[tuple[int | None, float, str]]:
        """(rank, modelled %, basis) for every rank under ``pct`` % modelled, then
        (None, ..) for the total if it is under."""
        out = [(r, c.modelled_pct, c.basis) for r, c in self.ranks.items() if c.modelled_pct < pct]
        if self.total.modelled_pct < pct:
            out.append((None, self.total.modelled_pct, self.total.basis))
        return out


__all__ = ["RankCoverage"]
