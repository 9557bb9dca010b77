"""The table type handed from the tables stage to the writers."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from perfreport.tables import columns as C


@dataclass
class Sheet:
    """One report sheet: ``columns`` and ``rows`` of plain Python values.

    Nested values are rendered as text by the table builders. Units live in the column
    names, e.g. ``time (µs)``. ``formats`` maps a column to an Excel number format;
    ``notes`` are shown under the console summary and in the workbook's ``notes`` sheet.
    The CLI never needs pandas; :attr:`df` builds a DataFrame on demand for programmatic use.
    """

    name: str
    columns: list[str]
    rows: list[list[Any]]
    formats: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    @classmethod
    def from_records(cls, name: str, records: list[dict], columns: list[str], formats=None, notes=None) -> "Sheet":
        return cls(
            name, list(columns), [[r.get(c) for c in columns] for r in records], dict(formats or {}), list(notes or [])
        )

    def records(self) -> list[dict]:
        return [dict(zip(self.columns, r)) for r in self.rows]

    @property
    def df(self):
        try:
            import pandas as pd
        except ImportError:
            raise ImportError("Sheet.df needs pandas: pip install 'perfreport[pandas]'") from None

        return pd.DataFrame(self.rows, columns=self.columns)

    def to_pandas(self):
        """The sheet as a pandas DataFrame (pandas is imported only here)."""
        return self.df


def rank(records: list[dict], key: str, total: float) -> list[dict]:
    """Sort by ``key`` descending (stable) and add percent / cumulative percent of ``total``."""
    records.sort(key=lambda r: -(r.get(key) or 0.0))
    cum = 0.0
    for r in records:
        p = 100.0 * (r.get(key) or 0.0) / total if total else 0.0
        cum += p
        r[C.PERCENT_PCT] = p
        r[C.CUMULATIVE_PERCENT_PCT] = cum
    return records


def fmt_dims(dims) -> str:
    """Readable tensor shapes: ``[[16, 559], [], [1024]]`` -> ``(16, 559), (), (1024)``."""
    if dims is None:
        return ""
    parts = []
    for d in dims:
        if isinstance(d, list):
            if d and isinstance(d[0], list):  # TensorList (a member that is no list is shown as is)
                parts.append("[" + ", ".join(_shape(x) for x in d) + "]")
            else:
                parts.append("(" + ", ".join(map(str, d)) + ")")
        else:
            parts.append(str(d))
    return ", ".join(parts)


def _shape(x) -> str:
    return "(" + ", ".join(map(str, x)) + ")" if isinstance(x, list) else str(x)


def fmt_list(values) -> str:
    """Readable flat list of strings: dtypes or concrete inputs."""
    if values is None or all(v in (None, "") for v in values):
        return ""
    return ", ".join("" if v is None else str(v) for v in values)
