"""Checks every console view must pass at every width: no line wider than the console, no
word folded onto the next line, no number cut. Used by tests/writers/test_views.py (and proven
able to fail there, on a folding rich table)."""

from __future__ import annotations

import io

from rich.console import Console

ELLIPSIS = "…"


def render(draw, width: int) -> str:
    """What ``draw(console)`` prints on a ``width``-column console, as plain text."""
    c = Console(width=width, record=True, file=io.StringIO(), color_system=None)
    draw(c)
    return c.export_text()


def words(text: str) -> set[str]:
    return set(text.split())


def folded_words(out: str, source: str) -> list[str]:
    """Words printed that are not words of ``source`` (the full, unshortened text): a word
    folded onto two lines prints two such fragments. Words with an ``…`` (a name shortened in
    the middle on purpose) are not counted; a rule line neither."""
    ok = words(source)
    return [w for w in out.split() if ELLIPSIS not in w and set(w) != {"─"} and w not in ok]


def cut_numbers(out: str, numbers) -> list[str]:
    """The ``numbers`` (cells as printed in full) that appear in no line of ``out`` whole."""
    lines = out.splitlines()
    return [n for n in numbers if n and not any(n in line for line in lines)]


def check(out: str, width: int, source: str, numbers=()) -> None:
    too_wide = [line for line in out.splitlines() if len(line.rstrip()) > width]
    assert not too_wide, f"wider than {width}: {too_wide[:2]}"
    assert not (f := folded_words(out, source)), f"folded or broken words: {f[:5]}"
    assert not (c := cut_numbers(out, numbers)), f"numbers cut or missing: {c[:5]}"


def fitted_numbers(fitted) -> list[str]:
    """Every cell of a numeric column of a :class:`~perfreport.writers.fit_table.Fitted`."""
    return [s for row in fitted.cells for c, s in zip(fitted.cols, row) if c.num and s]


def fitted_source(fitted) -> str:
    """The full text of a laid-out table's cells and headers (before shortening)."""
    return " ".join([c.head for c in fitted.cols] + [s for row in fitted.cells for s in row] + [fitted.title or ""])
