"""The table type handed from the tables stage to the writers."""
from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd


@dataclass
class Sheet:
    """One report sheet.

    ``df`` holds plain Python/numpy scalars and strings only (nested values are rendered
    as text by the table builders). Units live in the column names, e.g. ``time (µs)``.
    ``formats`` maps a column to an Excel number format; ``notes`` are shown under the
    console summary and in the workbook's ``notes`` sheet.
    """

    name: str
    df: pd.DataFrame
    formats: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    complete: bool = True


US = "0.000"
MS = "0.000"
PCT = "0.00"
INT = "0"
G = "0.000"


def fmt_dims(dims) -> str:
    """Readable tensor shapes: ``[[16, 559], [], [1024]]`` -> ``(16, 559), (), (1024)``."""
    if dims is None:
        return ""
    parts = []
    for d in dims:
        if isinstance(d, list):
            if d and isinstance(d[0], list):      # TensorList
                parts.append("[" + ", ".join("(" + ", ".join(map(str, x)) + ")" for x in d) + "]")
            else:
                parts.append("(" + ", ".join(map(str, d)) + ")")
        else:
            parts.append(str(d))
    return ", ".join(parts)


def fmt_list(values) -> str:
    """Readable flat list of strings: dtypes or concrete inputs."""
    if values is None or all(v in (None, "") for v in values):
        return ""
    return ", ".join("" if v is None else str(v) for v in values)
