"""The tree build's records: one :class:`~perfreport.events.Op` or
:class:`~perfreport.events.GpuEvent` per kept event, whose fields live in the shared
:class:`~perfreport.events.Columns` at its uid. One loop per list, the per-category record
classes looked up once (no call per record: the build makes one per kept event)."""

from __future__ import annotations

from perfreport.events import Columns, GpuEvent, Op, _kind


def make_ops(uids, name_codes, cat_codes, names: list, cats: list, cols: Columns) -> list[Op]:
    """Ops at ``uids`` named ``names[code]``, of category ``cats[code]`` (args:
    ``cols.args_table[cols.args[uid]]``)."""
    kinds = [_kind(Op, c) for c in cats]
    new = object.__new__
    out: list[Op] = []
    add = out.append
    for u, nm, ct in zip(uids, name_codes, cat_codes):
        o = new(kinds[ct])
        o.uid = u
        o.name = names[nm]
        o._src = cols
        o.parent = o._ch = o._k = None
        add(o)
    return out


def make_gpu(uids, name_codes, cat_codes, names: list, cats: list, cols: Columns) -> list[GpuEvent]:
    """GPU events at ``uids`` (their device and stream in ``cols`` too), as :func:`make_ops`."""
    kinds = [_kind(GpuEvent, c) for c in cats]
    new = object.__new__
    out: list[GpuEvent] = []
    add = out.append
    for u, nm, ct in zip(uids, name_codes, cat_codes):
        g = new(kinds[ct])
        g.uid = u
        g.name = names[nm]
        g._src = cols
        g.launcher = None
        add(g)
    return out


__all__ = ["make_gpu", "make_ops"]
