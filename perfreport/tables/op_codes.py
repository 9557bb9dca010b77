"""Codes over a list of ops, found per distinct value, not op by op: what the op and perf sheets
group the ops by (their argument sets, their names).

The reader interns argument dicts (ops with identical arguments share one, see
:mod:`perfreport.events`), so an argument set is told by the dict's identity: ``id(op.args)``.
Where every op reads from one :class:`~perfreport.events.Columns` that identity is looked up once
per entry of its ``args_table`` and gathered by the ops' ``args`` codes; else read op by op."""

from __future__ import annotations

from itertools import repeat
from operator import attrgetter, is_

import numpy as np

from perfreport.events import _EMPTY

_args, _src, _uid = attrgetter("args"), attrgetter("_src"), attrgetter("uid")


def _column_codes(ops):
    """(the ops' shared columns, their int32 ``args`` codes), or None when they do not all read
    from one :class:`~perfreport.events.Columns` with an args table."""
    n = len(ops)
    src = ops[0]._src if n else None
    if not n or src.__class__ is tuple or getattr(src, "args_table", None) is None:
        return None
    if not all(map(is_, map(_src, ops), repeat(src))):  # (C loops)
        return None
    uid = np.fromiter(map(_uid, ops), dtype=np.intp, count=n)
    return src, np.frombuffer(src.args, dtype=np.int32)[uid] if len(src.args) else np.zeros(0, np.int32)


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
