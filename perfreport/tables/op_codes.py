"""Codes over a list of ops, found per distinct value, not op by op: what the op and perf sheets
group the ops by (their argument sets, their names).

The reader interns argument dicts (ops with identical arguments share one, see
:mod:`perfreport.events`), so an argument set is told by the dict's identity: ``id(op.args)``.
Where every op reads from one :class:`~perfreport.events.Columns` that identity is looked up once
per entry of its ``args_table`` and gathered by the ops' ``args`` codes; else read op by op."""

from __future__ import annotations

from operator import attrgetter

import numpy as np

from perfreport.events import _EMPTY
from perfreport.tables.op_times import shared_uids

_args = attrgetter("args")


def _column_codes(ops):
    """(the ops' shared columns, their int32 ``args`` codes), or None when they do not all read
    from one :class:`~perfreport.events.Columns` with an args table."""
    src, uid = shared_uids(ops)
    if uid is None or getattr(src, "args_table", None) is None:
        return None
    return src, np.frombuffer(src.args, dtype=np.int32)[uid]


def args_ids(ops, empty: int | None = None) -> np.ndarray:
    """int64 ``id(op.args)`` of each of ``ops`` (a list); with ``empty`` given, that value for
    the ops whose arguments are empty (``not op.args``) instead."""
    col = _column_codes(ops)
    if col is None:
        if empty is None:
            return np.fromiter(map(id, map(_args, ops)), dtype=np.int64, count=len(ops))
        return np.fromiter((id(a) if (a := o.args) else empty for o in ops), dtype=np.int64, count=len(ops))
    src, code = col
    table = src.args_table  # (its last entry is None: code -1)
    lut = [id(a if a is not None else _EMPTY) if empty is None or a else empty for a in table]
    return np.array(lut, dtype=np.int64)[code]


__all__ = ["args_ids"]
