"""The tree build's records: one :class:`~perfreport.events.Op` or
:class:`~perfreport.events.GpuEvent` per kept event, whose fields live in the shared
:class:`~perfreport.events.Columns` at its uid, name and columns read from its per-tree class
(:func:`~perfreport.events.column_kind`). One loop per list, the classes looked up once (no
call per record: the build makes one per kept event)."""

from __future__ import annotations

from perfreport.events import Columns, GpuEvent, Op, column_kind


def make_ops(uids, name_codes, cat_codes, names: list, cats: list, cols: Columns) -> list[Op]:
    """Ops at ``uids`` named ``names[name_codes[uid]]`` (the codes, by uid, become the name
    column ``cols.name``), of category ``cats[code]`` (args: ``cols.args_table[cols.args[uid]]``)."""
    cols.name = name_codes
    kinds = [column_kind(Op, c, cols, names, name_codes) for c in cats]
    new = object.__new__
    out: list[Op] = []
    add = out.append
    for u, ct in zip(uids, cat_codes):
        o = new(kinds[ct])
        o.uid = u
        o.parent = o._ch = o._k = None
        add(o)
    return out


def make_gpu(uids, name_codes, cat_codes, names: list, cats: list, cols: Columns) -> list[GpuEvent]:
    """GPU events at ``uids`` (their device and stream in ``cols`` too), as :func:`make_ops`."""
    cols.name = name_codes
    kinds = [column_kind(GpuEvent, c, cols, names, name_codes) for c in cats]
    new = object.__new__
    out: list[GpuEvent] = []
    add = out.append
    for u, ct in zip(uids, cat_codes):
        g = new(kinds[ct])
        g.uid = u
        g.launcher = None
        add(g)
    return out


__all__ = ["make_gpu", "make_ops"]
