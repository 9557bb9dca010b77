"""Codes over a list of GPU events, found per distinct value, not event by event: what the perf
sheets' sums (:func:`perfreport.tables.perf_groups.group_units`) and the cross-stream overlap
(:func:`perfreport.tables.flags.cross_stream_overlap_us`) group the events by.

Codes are small ints (int32, a few bytes an event: these arrays are alive at the perf sheets'
peak). The events' streams come from the reader's ``ds`` column where they all read from it
(one lookup per (device, stream) of the trace), else one by one."""

from __future__ import annotations

from itertools import count
from operator import attrgetter

import numpy as np

from perfreport.tables.op_times import CHUNK, remembered, shared_uids

_uid = attrgetter("uid")


def first_codes(values, key=None) -> tuple[np.ndarray, list]:
    """(int32 code of each of ``values`` (a list), the distinct values in order of first
    appearance: the numbering ``d.setdefault(value, len(d))`` value by value gives). With ``key``
    (a function), of ``key(v)`` for each of ``values``, read twice rather than listed."""
    lut = dict.fromkeys(values if key is None else map(key, values))
    lut.update(zip(lut, count()))  # (its values set in place: one dict, not two, at the peak)
    it = values if key is None else map(key, values)
    return np.fromiter(map(lut.__getitem__, it), dtype=np.int32, count=len(values)), list(lut)


def event_codes(events, attr: str) -> tuple[np.ndarray, list]:
    """:func:`first_codes` of attribute ``attr`` of each of ``events`` (a list of records), made
    once while :func:`~perfreport.tables.op_times.shared` holds the list (the op and kernel
    sheets code the same lists by name, category, launcher: one pass over the records, not one
    per sheet). Read-only: copy before writing into the codes."""
    return remembered(events, ("codes", attr), lambda: listed_codes(events, attr))


def listed_codes(events, attr: str) -> tuple[np.ndarray, list]:
    """:func:`first_codes` of attribute ``attr`` of each of ``events``, read a chunk at a time
    (not remembered: see :func:`event_codes`)."""
    return _listed_codes(events, _LISTERS.get(attr) or _lister(attr))


# attribute values of a chunk of records by a list comprehension (a slot read ~3x faster than
# ``map(attrgetter)``; chunks of CHUNK bound the list: 512 KB)
_LISTERS = {
    "name": lambda es: [e.name for e in es],
    "cat": lambda es: [e.cat for e in es],
    "launcher": lambda es: [e.launcher for e in es],
}


def _lister(attr: str):
    get = attrgetter(attr)
    return lambda es: list(map(get, es))


def _listed_codes(events, lister) -> tuple[np.ndarray, list]:
    """:func:`first_codes` of ``lister``'s values of ``events``, read a chunk at a time."""
    n = len(events)
    lut: dict = {}
    code = np.empty(n, dtype=np.int32)
    for a in range(0, n, CHUNK):
        part = lister(events[a : a + CHUNK])
        if not lut:
            lut = dict.fromkeys(part)
            lut.update(zip(lut, count()))
        else:  # (the values new in this chunk, numbered after the earlier ones, in order)
            for k in dict.fromkeys(part):
                if k not in lut:
                    lut[k] = len(lut)
        code[a : a + len(part)] = list(map(lut.__getitem__, part))
    if len(lut) <= 1 << 15:  # (int16 where the values are few: names, categories; half the bytes)
        code = code.astype(np.int16)
    return code, list(lut)


def positions_by_uid(events) -> np.ndarray | None:
    """int32 position in ``events`` of each uid (-1: none there), or None when their uids are
    not held (:func:`~perfreport.tables.op_times.shared_uids`); made once while shared."""

    def make():
        uid = shared_uids(events)[1]
        if uid is None:
            return None
        pos = np.full(int(uid.max()) + 1 if uid.size else 0, -1, dtype=np.int32)
        pos[uid] = np.arange(uid.size, dtype=np.int32)
        return pos

    return remembered(events, "positions", make)


def first_seen(key: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(int32 code of each of ``key`` (ints), the position of each code's first key): codes
    numbered in order of first appearance, as a dict filled key by key numbers them. Keys in a
    range not much longer than they are many: by a table over the range (int32, no sort of the
    keys, a few bytes a key at the peak); else by one stable sort (not ``np.unique``, whose first
    call imports ``numpy.ma``: see :mod:`perfreport.stats.order`)."""
    n = key.size
    if not n:
        return np.zeros(0, dtype=np.int32), np.zeros(0, dtype=np.intp)
    lo, hi = int(key.min()), int(key.max())
    m = hi - lo + 1
    if m <= 4 * n + 4096 and n < 1 << 31:
        k = (key - lo).astype(np.int32, copy=False) if lo else key.astype(np.int32, copy=False)
        first = np.full(m, n, dtype=np.int32)
        np.minimum.at(first, k, np.arange(n, dtype=np.int32))  # each key's earliest position
        at = np.flatnonzero(first < n)
        order = np.argsort(first[at], kind="stable")
        lut = np.empty(m, dtype=np.int32)  # (only the keys present are read)
        lut[at[order]] = np.arange(order.size, dtype=np.int32)
        return lut[k], first[at[order]].astype(np.intp)
    order = np.argsort(key, kind="stable")  # (a stable sort: each run of equal keys starts at its earliest)
    s = key[order]
    new = np.empty(n, dtype=bool)
    new[0] = True
    np.not_equal(s[1:], s[:-1], out=new[1:])
    del s
    run = np.cumsum(new, dtype=np.int32)
    run -= 1  # each sorted key's run
    first = order[new]  # each run's earliest position
    by_first = np.argsort(first, kind="stable")
    rank = np.empty(first.size, dtype=np.int32)
    rank[by_first] = np.arange(first.size, dtype=np.int32)
    code = np.empty(n, dtype=np.int32)
    code[order] = rank[run]
    return code, first[by_first]


def dense_codes(key: np.ndarray, m: int) -> tuple[np.ndarray, np.ndarray]:
    """(int32 code of each of ``key`` (ints in [0, m)), the distinct keys, ascending, one per code)."""
    if m <= 4 * key.size + 4096:  # a table as long as the keys' range: no sort
        present = np.zeros(m, dtype=bool)
        present[key] = True
        distinct = np.flatnonzero(present)
        lut = np.cumsum(present, dtype=np.int32)
        del present
        lut -= 1
        return lut[key], distinct
    distinct, inv = np.unique(key, return_inverse=True)
    return inv.reshape(-1).astype(np.int32), distinct


def _pair_key(a: np.ndarray, b: np.ndarray, nb: int) -> np.ndarray:
    """``a * nb + b`` (codes ``b`` < ``nb``), in int32 where it fits (one 4-byte array, no int64 temporaries)."""
    big = (int(a.max()) + 1 if a.size else 1) * nb >= 1 << 31
    key = a.astype(np.int64 if big else np.int32)
    key *= nb
    key += b
    return key


def uids_of(events) -> np.ndarray:
    """The events' uids, from :func:`~perfreport.tables.op_times.shared_uids` when it holds them."""
    uid = shared_uids(events)[1]
    return uid if uid is not None else np.fromiter(map(_uid, events), dtype=np.int64, count=len(events))


def stream_value_codes(events) -> tuple[np.ndarray, list]:
    """(int32 code of each event's :attr:`~perfreport.events.GpuEvent.stream` into the list of
    streams returned): streams of different devices with one number share a code."""
    src, uid = shared_uids(events)
    if uid is None or getattr(src, "ds", None) is None:
        return first_codes([g.stream for g in events])
    values = list(dict.fromkeys(s for _, s in src.devstreams))
    at = {s: i for i, s in enumerate(values)}
    lut = np.array([at[s] for _, s in src.devstreams] or [0], dtype=np.int32)
    return lut[np.asarray(src.ds)[uid]], values


def kinds(events, name_code: np.ndarray, n_names: int, kind_of) -> np.ndarray:
    """int8 ``kind_of(event)`` of each of ``events``, called once per distinct (name, category)
    (``name_code``: each event's code among ``n_names`` names): ``kind_of`` reads only those two."""
    cat_code, cats = listed_codes(events, "cat")  # (not remembered: read here alone)
    nc = max(len(cats), 1)
    code, distinct = dense_codes(_pair_key(name_code, cat_code, nc), max(n_names, 1) * nc)
    first = np.full(distinct.size, -1, dtype=np.int64)
    first[code] = np.arange(code.size)  # an event of each pair (any one would do)
    lut = np.array([kind_of(events[i]) for i in first.tolist()], dtype=np.int8)
    return lut[code]


def name_stream_codes(events, name_code: np.ndarray, names: list) -> tuple[np.ndarray, list]:
    """(int32 code of each event's (name, stream), the (name, stream) of each code), for
    ``name_code``: each event's index into ``names``."""
    st_code, streams = stream_value_codes(events)
    ns = max(len(streams), 1)
    code, distinct = dense_codes(_pair_key(name_code, st_code, ns), max(len(names), 1) * ns)
    del st_code
    ni, si = np.divmod(distinct, ns)
    return code, list(zip(map(names.__getitem__, ni.tolist()), map(streams.__getitem__, si.tolist())))


def looked_up(uid: np.ndarray, table: dict) -> tuple[np.ndarray, np.ndarray]:
    """(positions i, ascending, where ``uid[i]`` is a key of ``table`` {uid: float}; their values)."""
    if not table or not uid.size:
        return np.zeros(0, dtype=np.intp), np.zeros(0, dtype=np.float64)
    keys = np.fromiter(table.keys(), dtype=np.int64, count=len(table))
    vals = np.fromiter(table.values(), dtype=np.float64, count=len(table))
    o = np.argsort(keys, kind="stable")
    keys, vals = keys[o], vals[o]
    pos = np.searchsorted(keys, uid)
    np.minimum(pos, keys.size - 1, out=pos)
    at = np.flatnonzero(keys[pos] == uid)
    return at, vals[pos[at]]


__all__ = [
    "dense_codes",
    "event_codes",
    "positions_by_uid",
    "first_codes",
    "listed_codes",
    "first_seen",
    "kinds",
    "looked_up",
    "name_stream_codes",
    "stream_value_codes",
    "uids_of",
]
