"""The GPU events' launchers, coded once for the sheets that group by them (the between-the-kernels
arrays, the kernel sheets' parent ops, the unlinked events' rows).

:func:`launcher_table` reads each event's ``launcher`` once (a dict numbers the distinct ones in
order of first appearance, as :func:`~perfreport.tables.kernel_codes.first_codes` does), then
each distinct launcher's category and name once: what depends on the launcher alone is found per
launcher and gathered back to the events by their int32 codes. While
:func:`~perfreport.tables.op_times.shared` holds ``tree.gpu`` the table is made once for every
sheet (:func:`~perfreport.tables.op_times.remembered`)."""

from __future__ import annotations

from itertools import compress

import numpy as np

from perfreport.tables.kernel_codes import event_codes, first_seen, listed_codes
from perfreport.tables.op_times import remembered, remembering, shared_uids


class LauncherTable:
    """``code[i]``: event ``i``'s launcher, an index into ``launchers`` (one entry per distinct
    launcher, None among them at ``none``, -1: every event has one); per launcher its
    category code ``cat`` into ``cats`` and name code ``name`` into ``names`` (-1 for None)."""

    __slots__ = ("code", "launchers", "none", "cat", "cats", "name", "names")

    def __init__(self, gpu) -> None:
        self.code, launchers = _by_uid(gpu) or event_codes(gpu, "launcher")
        self.launchers = launchers
        self.none = k = next((i for i, lr in enumerate(launchers) if lr is None), -1)
        real = launchers if k < 0 else launchers[:k] + launchers[k + 1 :]  # (without None)
        cat, self.cats = listed_codes(real, "cat")
        name, self.names = listed_codes(real, "name")
        if k >= 0:
            cat, name = np.insert(cat, k, -1), np.insert(name, k, -1)
        self.cat, self.name = cat, name

    def cat_is(self, cats) -> np.ndarray:
        """bool per launcher: its category is one of ``cats`` (None's is none)."""
        return np.array([c in cats for c in self.cats] + [False])[self.cat]  # (code -1: the last, False)


def _by_uid(gpu):
    """(each event's launcher code, the launchers) numbered as first seen, keyed by the
    launchers' uids where every launcher reads from the tree's columns (uid = its row there:
    one record per uid): numpy over the uids, which are the records' own int objects, so no
    int object is made per launcher (a dict numbering ~120k launchers at 650 MB makes one int
    each). Where a launcher holds its own values (tests, graph-capture clones: their uids are
    not rows) None: coded by identity. (Clones take uids after the tree's, so a clone and a
    record never share one.)"""
    ll = [g.launcher for g in gpu]
    code, first = first_seen(np.array([-1 if lr is None else lr.uid for lr in ll], dtype=np.int64))
    rec = np.empty(len(ll), dtype=object)  # (the launchers picked by position: no int object each)
    rec[:] = ll
    del ll
    launchers = rec[first].tolist()
    del rec
    real = [lr for lr in launchers if lr is not None]
    src = real[0]._src if real else None
    if src is None or src.__class__ is tuple or [1 for lr in real if lr._src is not src]:
        return None  # (records of their own: their uids need not be distinct)
    return code, launchers


def launcher_table(gpu, keep: bool = True) -> LauncherTable:
    """The :class:`LauncherTable` of the events ``gpu`` (made once while shared; read-only).
    ``keep=False``: the remembered one if made, else one made for the caller alone (the
    between-the-kernels sheets: ~2.5 MB at 650 MB not held over their peak, the run's)."""
    if not keep:
        t = remembered(gpu, "launchers", lambda: None)
        return t if t is not None else LauncherTable(gpu)
    return remembered(gpu, "launchers", lambda: LauncherTable(gpu))


def remembering_launchers(gpu) -> bool:
    """Whether the launcher table of ``gpu`` is made and remembered."""
    return remembering(gpu) and remembered(gpu, "launchers", lambda: None) is not None


def unlinked_count(gpu) -> int:
    """How many of ``gpu`` have no launcher (from the launcher codes while remembered; no list)."""
    if not remembering(gpu):
        return sum(1 for g in gpu if g.launcher is None)
    t = launcher_table(gpu)
    return int(np.count_nonzero(t.code == t.none)) if t.none >= 0 else 0


def unlinked(gpu) -> tuple[list, object]:
    """(the events of ``gpu`` without a launcher, in order; their ``(columns, uids)`` for
    :func:`~perfreport.tables.op_times.shared`, None where ``gpu``'s uids are not held):
    found from the launcher codes, not event by event (made once while shared; where no launcher
    table is remembered yet, event by event: none is made for it)."""
    if not remembering_launchers(gpu):  # (no table made for this alone: it is made where it is held least)
        return [g for g in gpu if g.launcher is None], None

    def make():
        t = launcher_table(gpu)
        if t.none < 0:
            return [], None
        at = t.code == t.none
        src, uid = shared_uids(gpu)
        return list(compress(gpu, at.tolist())), ((src, uid[at]) if uid is not None else None)

    return remembered(gpu, "unlinked", make)


__all__ = ["LauncherTable", "launcher_table", "unlinked", "unlinked_count"]
