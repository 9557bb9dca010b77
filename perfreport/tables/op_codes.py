"""Codes over a list of ops, found per distinct value, not op by op: what the op and perf sheets
group the ops by (their argument sets, their names).

The reader interns argument dicts (ops with identical arguments share one, see
:mod:`perfreport.events`), so an argument set is told by the dict's identity: ``id(op.args)``.
Where every op reads from one :class:`~perfreport.events.Columns` that identity is looked up once
per entry of its ``args_table`` and gathered by the ops' ``args`` codes; else read op by op."""

from __future__ import annotations

import numpy as np

from perfreport.events import _EMPTY
from perfreport.tables.kernel_codes import first_codes, first_seen
from perfreport.tables.op_times import shared_uids


def _column_codes(ops):
    """(the ops' shared columns, their int32 ``args`` codes), or None when they do not all read
    from one :class:`~perfreport.events.Columns` with an args table."""
    src, uid = shared_uids(ops)
    if uid is None or getattr(src, "args_table", None) is None:
        return None
    return src, np.frombuffer(src.args, dtype=np.int32)[uid]


def args_codes(ops, empty: bool = False) -> np.ndarray:
    """int32 code of each of ``ops``' argument set (a list of ops): equal codes for the same
    ``op.args`` dict, numbered in order of first appearance; with ``empty``, one code for every
    op whose arguments are empty (``not op.args``) as well. Found per entry of the columns'
    ``args_table`` where the ops read from one (small ints, no id per op), else op by op."""
    col = _column_codes(ops)
    if col is None:
        if empty:
            return first_codes([id(a) if (a := o.args) else 0 for o in ops])[0]  # (no id is 0)
        return first_codes(ops, _arg_id)[0]
    src, code = col
    table = src.args_table  # (its last entry is None: code -1, read as the empty mapping)
    ident = [id(a if a is not None else _EMPTY) if not empty or a else 0 for a in table]
    lut = first_codes(ident)[0]  # (one code per distinct dict)
    return first_seen(lut[code])[0]


def _arg_id(op) -> int:
    return id(op.args)


__all__ = ["args_codes"]
