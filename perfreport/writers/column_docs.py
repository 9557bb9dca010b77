"""What every report column means: unit, formula, source. The workbook's ``columns`` sheet.

The definitions live in :mod:`perfreport.tables.columns` (every column once). A test checks
that every column of every fixture's report has one there, so a new column in ``tables/``
needs one line in that module. Lookup is by exact column name first, then by
prefix (``param: ...``) so model parameters are covered whatever the model names them.
"""

from __future__ import annotations

from perfreport.tables import columns as C

# column -> (unit, formula / meaning, source) of every column the schema defines
DOCS: dict[str, tuple[str, str, str]] = {
    c.name: (c.unit, c.meaning, c.source) for c in C.SCHEMA.values() if c.meaning is not None
}
PREFIXES = C.PREFIXES

# generic fallbacks by what a header says about itself; used only when nothing above matches
SUFFIXES: dict[str, tuple[str, str]] = {
    "(µs)": ("µs", "microseconds"),
    "(ms)": ("ms", "milliseconds"),
    "(%)": ("%", "percent"),
}


def describe(column: str) -> tuple[str, str, str] | None:
    """(unit, formula, source) of ``column``, or None when it has no definition."""
    if column in DOCS:
        return DOCS[column]
    for p, d in PREFIXES.items():
        if column.startswith(p):
            return d
    return None


def columns_rows(sheets) -> list[list[str]]:
    """Rows of the ``columns`` sheet: column, unit, formula / meaning, source, sheets it is in."""
    where: dict[str, list[str]] = {}
    for sh in sheets:
        for c in sh.columns:
            key = "param: *" if str(c).startswith(C.PARAM_PREFIX) else str(c)
            where.setdefault(key, []).append(sh.name)
    out = []
    for col, names in where.items():
        d = describe(C.param("x") if col == "param: *" else col)
        if d is None:
            unit = next((u for s, (u, _) in SUFFIXES.items() if col.endswith(s)), "")
            d = (unit, "(no definition yet)", "")
        out.append([col, d[0], d[1], d[2], ", ".join(names)])
    return out


__all__ = ["DOCS", "PREFIXES", "columns_rows", "describe"]
