"""One way to print a table at a given width: every console view goes through :func:`fit`.

A table is a list of :class:`Col` and rows of cells (strings; ``None`` is blank; other values
are shown with ``str``). :func:`fit` lays it out for ``width`` characters:

* a cell is one line, never folded: whitespace is collapsed and control characters escaped;
* a number (``num=True``) or any column not marked ``flex`` is shown whole, never cut: its
  width is its longest cell (or header);
* a ``flex`` column (op and kernel names, shapes) is the only one shortened: in the middle
  by default (the head names the family, the tail the variant), at the end (``cut="end"``)
  or by whole trailing items (``cut="items"``: shapes lose tensors, never digits);
  it gives up width down to ``pref`` while an optional column remains, then to ``min``;
* optional columns (``drop > 0``) are dropped when the table does not fit, the highest
  ``drop`` first; columns with ``drop == 0`` are always shown. A column empty in every row is
  left out. :attr:`Fitted.dropped` names what was dropped, for a note under the table.

The result prints on a rich console (a bold header) and as plain lines
(:meth:`Fitted.lines`), so ``--format table`` and the snapshots use the same text. When even
the essential columns at their narrowest exceed ``width``, the lines are as wide as they need
(wider than ``width``), never cut.
"""

from __future__ import annotations

import msgspec

from perfreport.writers.cells import plain, text

ELLIPSIS = "…"
SEP = "  "  # between columns
RULE = "─"


class Col(msgspec.Struct):
    """One column: ``head`` (also the row key unless ``key`` is given), right-aligned when
    ``num``; ``drop``: 0 always shown, else the order of dropping (highest first); ``flex``
    columns are shortened (``cut`` ``"middle"``, ``"end"`` or ``"items"``: whole trailing
    comma-separated items dropped, for shapes) to no less than ``pref`` while
    an optional column is left, then no less than ``min``."""

    head: str
    key: str | None = None
    num: bool = False
    drop: int = 0
    flex: bool = False
    min: int = 12
    pref: int | None = None
    cut: str = "middle"
    max: int | None = None  # flex: widest ever shown

    @property
    def k(self) -> str:
        return self.key if self.key is not None else self.head


def one_line(v) -> str:
    """A cell as one printable line."""
    v = plain(v)
    if v is None:
        return ""
    if isinstance(v, float):
        v = f"{v:,.3f}"
    elif isinstance(v, int) and not isinstance(v, bool):
        v = f"{v:,}"
    return " ".join(text(v).split())


def shorten_middle(s: str, width: int) -> str:
    """``s`` cut to ``width`` characters by dropping its middle."""
    s = one_line(s)
    if len(s) <= width:
        return s
    if width <= 1:
        return s[:width]
    keep = width - 1
    head = (keep + 1) // 2
    return s[:head] + ELLIPSIS + s[len(s) - (keep - head) :]


def shorten_end(s: str, width: int) -> str:
    s = one_line(s)
    return s if len(s) <= width else s[: max(0, width - 1)] + ELLIPSIS


def split_items(s: str) -> list[str]:
    """The top-level comma-separated items of ``s`` (commas inside brackets stay)."""
    out, depth, cur = [], 0, []
    for ch in s:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth = max(0, depth - 1)
        if ch == "," and depth == 0:
            out.append("".join(cur))
            cur = []
            continue
        cur.append(ch)
    out.append("".join(cur))
    return out


def shorten_items(s: str, width: int) -> str:
    """``s`` (a list of shapes) cut to ``width`` by dropping whole trailing items, so no
    number is cut: ``(8944,1024),(1024,2816)`` -> ``(8944,1024)…``; ``…`` when not even
    the first item fits."""
    s = one_line(s)
    if len(s) <= width:
        return s
    items = split_items(s)
    sep = "," if ", " not in s else ", "
    items = [i.strip() for i in items]
    keep = ""
    for i in range(len(items), 0, -1):
        cand = sep.join(items[:i]) + ELLIPSIS
        if len(cand) <= width:
            keep = cand
            break
    return keep or ELLIPSIS


class Fitted(msgspec.Struct):
    """A laid-out table: print it on a rich console, or take :meth:`lines`."""

    title: str | None
    cols: list[Col]
    widths: list[int]
    cells: list[list[str]]
    dropped: list[str]
    width: int

    def _cell(self, c: Col, w: int, s: str) -> str:
        if len(s) > w:
            s = {"end": shorten_end, "items": shorten_items}.get(c.cut, shorten_middle)(s, w)
        return s.rjust(w) if c.num else s.ljust(w)

    def header(self) -> str:
        return SEP.join(self._cell(c, w, c.head) for c, w in zip(self.cols, self.widths)).rstrip()

    def body(self) -> list[str]:
        return [
            SEP.join(self._cell(c, w, s) for c, w, s in zip(self.cols, self.widths, r)).rstrip() for r in self.cells
        ]

    @property
    def total(self) -> int:
        return sum(self.widths) + len(SEP) * max(0, len(self.widths) - 1)

    def lines(self) -> list[str]:
        out = []
        if self.title:
            out.append(shorten_end(self.title, max(self.width, self.total)))
        if self.cols:
            out += [self.header(), RULE * self.total]
        return out + self.body()

    def __rich_console__(self, console, options):
        from rich.text import Text

        if self.title:
            yield Text(shorten_end(self.title, max(self.width, self.total)), no_wrap=True, overflow="ignore")
        if self.cols:
            yield Text(self.header(), style="bold", no_wrap=True, overflow="ignore")
            yield Text(RULE * self.total, no_wrap=True, overflow="ignore")
        for line in self.body():
            yield Text(line, no_wrap=True, overflow="ignore")

    def text(self) -> str:
        return "\n".join(self.lines()) + "\n"


def fit(rows, cols: list[Col], width: int, *, title: str | None = None, keep_empty: bool = False) -> Fitted:
    """Lay ``rows`` (dicts keyed by :attr:`Col.k`, or sequences in ``cols`` order) out for
    ``width`` characters (see the module docstring)."""
    recs = [r if isinstance(r, dict) else dict(zip((c.k for c in cols), r)) for r in rows]
    data = {c.k: [one_line(r.get(c.k)) for r in recs] for c in cols}
    shown = [c for c in cols if keep_empty or any(data[c.k])]
    dropped = [c.head for c in cols if c not in shown]
    natural = {c.k: max([len(one_line(c.head))] + [len(s) for s in data[c.k]]) for c in cols}
    for c in cols:
        if c.flex and c.max is not None:
            natural[c.k] = max(min(natural[c.k], c.max), min(len(c.head), c.min))

    def need(ws) -> int:
        return sum(ws.values()) + len(SEP) * max(0, len(ws) - 1)

    while True:
        ws = {c.k: natural[c.k] for c in shown}
        optional = [c for c in shown if c.drop > 0]
        flex = [c for c in shown if c.flex]
        over = _shrink(flex, ws, need(ws) - width, lambda c: max(c.min, c.pref or c.min))
        if over > 0 and not optional:
            over = _shrink(flex, ws, over, lambda c: c.min)
        if over <= 0 or not optional:
            break
        gone = max(optional, key=lambda c: (c.drop, shown.index(c)))
        shown.remove(gone)
        dropped.append(gone.head)
    widths = [ws[c.k] for c in shown]
    cells = [[data[c.k][i] for c in shown] for i in range(len(recs))]
    return Fitted(title, shown, widths, cells, dropped, width)


def _shrink(flex: list[Col], ws: dict, over: int, floor_of) -> int:
    """Take ``over`` characters from the flex columns, widest first, none below its floor;
    returns what is still over."""
    while over > 0:
        room = [c for c in flex if ws[c.k] > floor_of(c)]
        if not room:
            return over
        c = max(room, key=lambda c: ws[c.k] - floor_of(c))
        others = [ws[o.k] - floor_of(o) for o in room if o is not c]
        step = max(1, min(over, ws[c.k] - floor_of(c) - (max(others) if others else 0)))
        ws[c.k] -= step
        over -= step
    return over


__all__ = ["Col", "Fitted", "fit", "one_line", "shorten_end", "shorten_items", "shorten_middle", "split_items"]
