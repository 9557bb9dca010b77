"""The table type handed from the tables stage to the writers."""

from __future__ import annotations

import msgspec
from msgspec import field
from typing import Any

from perfreport.tables import columns as C


class Sheet(msgspec.Struct):
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

    def __repr__(self) -> str:
        cols = ", ".join(map(str, self.columns[:6])) + (", …" if len(self.columns) > 6 else "")
        return f"<Sheet {self.name!r}: {len(self.rows)} rows × {len(self.columns)} columns ({cols})>"

    def _repr_html_(self) -> str:
        """A notebook cell: the first 10 rows."""
        from html import escape

        head = "".join(f"<th>{escape(str(c))}</th>" for c in self.columns)
        body = "".join(
            "<tr>" + "".join(f"<td>{'' if v is None else escape(str(v))}</td>" for v in r) + "</tr>"
            for r in self.rows[:10]
        )
        more = f"<p>… {len(self.rows) - 10} more rows</p>" if len(self.rows) > 10 else ""
        return f"<p><b>{escape(self.name)}</b>: {len(self.rows)} rows</p><table><tr>{head}</tr>{body}</table>{more}"

    @classmethod
    def from_records(cls, name: str, records: list[dict], columns: list[str], formats=None, notes=None) -> "Sheet":
        return cls(
            name, list(columns), [[r.get(c) for c in columns] for r in records], dict(formats or {}), list(notes or [])
        )

    def records(self) -> list[dict]:
        return [dict(zip(self.columns, r)) for r in self.rows]

    @property
    def df(self):
        """The sheet as a pandas DataFrame, cells as stored (see :meth:`to_pandas` for typed columns)."""
        try:
            import pandas as pd
        except ImportError:
            raise ImportError("Sheet.df needs pandas: pip install 'perfreport[pandas]'") from None

        return pd.DataFrame(self.rows, columns=self.columns)

    def to_pandas(self):
        """The sheet as a pandas DataFrame with the types the data has (pandas is imported only
        here): a column whose cells are all numbers or empty is numeric (float64, NaN for empty;
        int64 when every cell is an integer); shape columns (``input dims``, ``input strides``)
        hold tuples (``(16, 559)``; a tensor list is a list of tuples; a scalar ``()``; a
        non-tensor argument stays text, :func:`parse_dims`); text stays text (object)."""
        try:
            import pandas as pd
        except ImportError:
            raise ImportError("Sheet.to_pandas needs pandas: pip install 'perfreport[pandas]'") from None

        df = pd.DataFrame(self.rows, columns=self.columns)
        for c in df.columns:
            vals = [v for v in df[c] if v is not None and v == v]
            if str(c) in SHAPE_COLUMNS:
                df[c] = [parse_dims(v) if isinstance(v, str) else v for v in df[c]]
            elif vals and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in vals):
                ints = len(vals) == len(df) and all(isinstance(v, int) for v in vals)
                df[c] = pd.to_numeric(df[c], errors="coerce").astype("int64" if ints else "float64")
        return df


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


SHAPE_COLUMNS = (C.INPUT_DIMS, C.INPUT_STRIDES, C.INPUT_DIMS_B)


def parse_dims(s: str):
    """The inverse of :func:`fmt_dims`: ``(16, 559), (), (1024)`` -> ``((16, 559), (), (1024,))``;
    ``[(1, 2), (3, 4)]`` -> a list of tuples; an item that is not a shape stays a string."""
    if not s:
        return ()
    out, depth, cur = [], 0, ""
    for ch in s + ",":
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
            continue
        depth += (ch in "([") - (ch in ")]")
        cur += ch

    def one(item: str):
        if item.startswith("[") and item.endswith("]"):
            return list(parse_dims(item[1:-1]))
        if item.startswith("(") and item.endswith(")"):
            try:
                return tuple(int(x) for x in item[1:-1].split(",") if x.strip())
            except ValueError:
                return item
        return item

    return tuple(one(x) for x in out)


def fmt_list(values) -> str:
    """Readable flat list of strings: dtypes or concrete inputs."""
    if values is None or all(v in (None, "") for v in values):
        return ""
    return ", ".join("" if v is None else str(v) for v in values)
