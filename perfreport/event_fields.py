"""The record classes' building blocks: the per-category and per-tree subclasses, and the
fields that read a record's own tuple or its tree's columns (:mod:`perfreport.events`)."""

from __future__ import annotations

from perfreport.event_columns import column_value, limits

_LAUNCH = ("cuda_runtime", "cuda_driver")  # (events.RUNTIME, events.DRIVER)


def _int_prop(field: str, pos: int, launch: bool | None = None):
    """An int field from the record's tuple or column ``field``. ``launch``: the ops' ``cs``
    column holds the correlation of launch calls (True), else the sequence number (False).
    A write to a built tree's record goes to the column (a value outside int64's range, or
    NONE / SIDE themselves, to ``side``)."""

    def get(self):
        s = self._src
        if s.__class__ is tuple:
            return s[pos]
        if launch is not None and (self.cat in _LAUNCH) is not launch:
            return None
        return column_value(s, field, self.uid)

    def set(self, value):
        s = self._src
        if s.__class__ is tuple:
            t = list(s)
            t[pos] = value
            self._src = tuple(t)
            return
        if launch is not None and (self.cat in _LAUNCH) is not launch:
            raise AttributeError(f"a {self.cat} record's {field!r} column holds another field")
        col, u = getattr(s, field), self.uid
        none, side, lo, hi = limits(col)
        if value is None:
            col[u] = none
        elif lo <= value <= hi:
            col[u] = value
        else:
            col[u] = side
            s.side[(field, u)] = value

    return property(get, set)


def _kind(base, cat: str):
    """The subclass of ``base`` for records made by the constructor, whose class attribute
    ``cat`` is ``cat`` (cached); ``name`` and ``_src`` (its own values' tuple) in slots."""
    k = base._kinds.get(cat)
    if k is None:
        d = {"__slots__": ("name", "_src"), "cat": cat, "__module__": base.__module__}
        k = base._kinds[cat] = type(base.__name__, (base,), d)
    return k


def column_kind(base, cat: str, cols, names: list, codes):
    """The subclass of ``base`` for a built tree's records of category ``cat`` (one per tree
    and category, kept in ``cols.kinds``): ``_src`` is the tree's ``cols`` and ``name`` is
    ``names[codes[uid]]``, both read from the class, so a record stores neither (16 bytes
    less: an Op 64 bytes, a GpuEvent 48). ``codes``: the name code column, by uid."""
    kinds = cols.kinds
    k = kinds.get((base, cat))
    if k is None:

        def name(self, n=names, c=codes):
            return n[c[self.uid]]

        d = {"__slots__": (), "cat": cat, "_src": cols, "name": property(name), "__module__": base.__module__}
        k = kinds[(base, cat)] = type(base.__name__, (base,), d)
    return k


def _float_prop(field: str, pos: int):
    """A float field from the record's tuple (at ``pos``) or its tree's column ``field``, where a
    write goes too."""

    def get(self):
        s = self._src
        return s[pos] if s.__class__ is tuple else getattr(s, field)[self.uid]

    def set(self, v: float) -> None:
        s = self._src
        if s.__class__ is tuple:
            self._src = s[:pos] + (v,) + s[pos + 1 :]
        else:
            getattr(s, field)[self.uid] = v

    return property(get, set)


class _Timed:
    """``ts`` / ``dur`` / ``end`` of a record: from its own tuple (``_src[0:2]``) or from the
    shared columns (``_src.ts[uid]``, where a write goes too)."""

    __slots__ = ()

    ts = _float_prop("ts", 0)
    dur = _float_prop("dur", 1)

    @property
    def end(self) -> float:
        s = self._src
        return s[0] + s[1] if s.__class__ is tuple else s.ts[self.uid] + s.dur[self.uid]


__all__ = ["column_kind"]
