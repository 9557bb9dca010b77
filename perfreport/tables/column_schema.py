"""The mechanism of the column schema (:mod:`perfreport.tables.columns` holds the columns):
the :class:`Column` record, the Excel number formats and the registry the definitions fill."""

from __future__ import annotations

import msgspec

US = "0.000"  # Excel number formats
PCT = "0.00"
INT = "0"


class Column(msgspec.Struct, frozen=True):
    """One report column: ``name`` (the header), ``unit``, ``fmt`` (Excel number format, None: as
    written), ``meaning`` (formula or definition, None: not defined yet) and ``source`` (where
    its figures come from)."""

    name: str
    unit: str
    meaning: str | None
    source: str
    fmt: str | None = None


SCHEMA: dict[str, Column] = {}


def _col(name: str, unit: str, meaning: str | None, source: str, fmt: str | None = None) -> str:
    if name in SCHEMA:
        raise ValueError(f"column {name!r} defined twice")
    SCHEMA[name] = Column(name, unit, meaning, source, fmt)
    return name


def formats(columns) -> dict[str, str]:
    """Excel number formats of ``columns`` (those that have one)."""
    return {c: SCHEMA[c].fmt for c in columns if c in SCHEMA and SCHEMA[c].fmt is not None}


__all__ = ["Column", "INT", "PCT", "SCHEMA", "US", "formats"]
