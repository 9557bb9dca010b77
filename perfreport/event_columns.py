"""The shared typed columns of a built tree's records (:class:`Columns`), their sentinels and
:class:`Sparse` columns. Re-exported by :mod:`perfreport.events`."""

from __future__ import annotations


NONE = -(1 << 63)  # int64 column sentinel: no value
SIDE = NONE + 1  # int64 column sentinel: the value is in ``Columns.side[(field, index)]``


class Columns:
    """Typed columns shared by the records of one tree (``array.array`` / numpy, by uid).
    Float fields (``ts``, ``dur``) are float64; int fields are int64 with :data:`NONE` for
    None and :data:`SIDE` for values kept in ``side`` (or a :class:`Sparse` column where most
    rows hold one value); ``thr`` codes into ``threads`` [(pid, tid)], ``ds`` into
    ``devstreams`` [(device, stream)]."""

    def __init__(self, **cols) -> None:
        self.side: dict = {}
        self.threads: list = []
        self.meta: dict = {}  # {uid: perf_meta dict} of the ops (written by passes)
        self.__dict__.update(cols)


class Sparse(dict):
    """A column whose rows mostly hold one value (``default``) or the value of another column
    (``default`` an array): ``{row: value}`` of the other rows. ``column[row]`` reads like an
    array's, and ``numpy.asarray(column)`` gives the whole column (``n`` rows)."""

    __slots__ = ("default", "n")

    def __init__(self, default, n: int, items=()) -> None:
        super().__init__(items)
        self.default, self.n = default, n

    def __missing__(self, row):
        d = self.default
        return d if d.__class__ in (int, float) else d[row]

    def __array__(self, dtype=None, copy=None):
        import numpy as np

        d = self.default
        out = np.full(self.n, d) if d.__class__ in (int, float) else np.array(d, dtype=np.float64)
        if self:
            out[list(self.keys())] = list(self.values())
        return out if dtype is None else out.astype(dtype, copy=False)


def column_value(table, field: str, i: int):
    """Row ``i`` of int64 column ``field`` of ``table`` (NONE -> None, SIDE -> ``table.side``)."""
    v = getattr(table, field)[i]
    if v == NONE:
        return None
    if v == SIDE:
        return table.side[(field, i)]
    return v
