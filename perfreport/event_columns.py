"""The shared typed columns of a built tree's records (:class:`Columns`), their sentinels and
:class:`Sparse` columns. Re-exported by :mod:`perfreport.events`."""

from __future__ import annotations

from array import array

NONE = -(1 << 63)  # int64 column sentinel: no value
SIDE = NONE + 1  # int64 column sentinel: the value is in ``Columns.side[(field, index)]``
NONE32 = -(1 << 31)  # the same in an int32 column (see :func:`compact`)
SIDE32 = NONE32 + 1
INT32_MAX = (1 << 31) - 1


class Columns:
    """Typed columns shared by the records of one tree (``array.array`` / numpy, by uid).
    Float fields (``ts``, ``dur``) are float64; int fields are int64 with :data:`NONE` for
    None and :data:`SIDE` for values kept in ``side`` (or a :class:`Sparse` column where most
    rows hold one value), or int32 ``array`` s with :data:`NONE32` / :data:`SIDE32` where
    every value fits (:func:`compact`); ``thr`` codes into ``threads`` [(pid, tid)], ``ds`` into
    ``devstreams`` [(device, stream)]."""

    def __init__(self, **cols) -> None:
        self.side: dict = {}
        self.threads: list = []
        self.meta: dict = {}  # {uid: perf_meta dict} of the ops (written by passes)
        self.kinds: dict = {}  # {(base, cat): record class} of a built tree (event_fields.column_kind)
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


_LIMITS64 = (NONE, SIDE, SIDE + 1, (1 << 63) - 1)
_LIMITS32 = (NONE32, SIDE32, SIDE32 + 1, INT32_MAX)


def limits(col) -> tuple[int, int, int, int]:
    """(none, side, lowest, highest value held in place) of int column ``col``: int32 sentinels
    in an int32 ``array`` (:func:`compact`), int64's otherwise (a :class:`Sparse` column too)."""
    return _LIMITS32 if col.__class__ is array and col.itemsize == 4 else _LIMITS64


def column_value(table, field: str, i: int):
    """Row ``i`` of int column ``field`` of ``table`` (NONE -> None, SIDE -> ``table.side``;
    NONE32 / SIDE32 in an int32 column)."""
    col = getattr(table, field)
    v = col[i]
    if v > SIDE32:  # (every value of an int32 column but its sentinels; most of an int64's)
        return v
    none, side = limits(col)[:2]
    if v == none:
        return None
    if v == side:
        return table.side[(field, i)]
    return v


def compact(col):
    """An int64 column (``array('q')`` or numpy) as an int32 ``array`` when every value fits
    in (SIDE32, INT32_MAX] (NONE -> NONE32, SIDE -> SIDE32; ``side`` entries keep their keys),
    else unchanged: 4 bytes a row instead of 8 for ids and sequence numbers (a 650 MB trace's
    tree: ~4 MB less)."""
    import numpy as np

    if col.__class__ is not array or col.typecode != "q" or not len(col):
        return col
    a = np.frombuffer(col, dtype=np.int64)
    none, side = a == NONE, a == SIDE
    v = a[~(none | side)]
    if v.size and (int(v.min()) <= SIDE32 or int(v.max()) > INT32_MAX):
        return col
    out = a.astype(np.int32)
    out[none] = NONE32
    out[side] = SIDE32
    r = array("i")
    r.frombytes(out.tobytes())
    return r
