"""The GPU events' launchers, coded once for the sheets that group by them (the between-the-kernels
arrays, the kernel sheets' parent ops, the unlinked events' rows).

:func:`launcher_table` reads each event's ``launcher`` once (a dict numbers the distinct ones in
order of first appearance, as :func:`~perfreport.tables.kernel_codes.first_codes` does), then
each distinct launcher's category and name once: what depends on the launcher alone is found per
launcher and gathered back to the events by their int32 codes. While
:func:`~perfreport.tables.op_times.shared` holds ``tree.gpu`` the table is made once for every
sheet (:func:`~perfreport.tables.op_times.remembered`)."""

from __future__ import annotations

import numpy as np

from perfreport.tables.kernel_codes import event_codes, listed_codes
from perfreport.tables.op_times import remembered, remembering, shared_uids


class LauncherTable:
    """``code[i]``: event ``i``'s launcher, an index into ``launchers`` (one entry per distinct
    launcher, None among them at ``none``, -1: every event has one); per launcher its
    category code ``cat`` into ``cats`` and name code ``name`` into ``names`` (-1 for None)."""

    __slots__ = ("code", "launchers", "none", "cat", "cats", "name", "names")

    def __init__(self, gpu) -> None:
        self.code, launchers = event_codes(gpu, "launcher")
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


def launcher_table(gpu) -> LauncherTable:
    """The :class:`LauncherTable` of the events ``gpu`` (made once while shared; read-only)."""
    return remembered(gpu, "launchers", lambda: LauncherTable(gpu))


def unlinked(gpu) -> tuple[list, object]:
    """(the events of ``gpu`` without a launcher, in order; their ``(columns, uids)`` for
    :func:`~perfreport.tables.op_times.shared`, None where ``gpu``'s uids are not held):
    found from the launcher codes, not event by event (made once while shared; where nothing is
    remembered, event by event: no launcher table is made for it)."""
    if not remembering(gpu):
        return [g for g in gpu if g.launcher is None], None

    def make():
        t = launcher_table(gpu)
        if t.none < 0:
            return [], None
        at = np.flatnonzero(t.code == t.none)
        src, uid = shared_uids(gpu)
        return list(map(gpu.__getitem__, at.tolist())), ((src, uid[at]) if uid is not None else None)

    return remembered(gpu, "unlinked", make)


__all__ = ["LauncherTable", "launcher_table", "unlinked"]
