"""Compact event records, made by the reader and nested/linked by the tree.

Only what the report needs is kept, in ``__slots__`` records (no per-event dict). The
``args`` of CPU events are decoded once and *interned* by the reader: ops with identical
arguments share one dict (volatile ids such as ``External id`` are kept apart), so a trace
with millions of ops holds only its distinct argument sets. Treat ``Op.args`` as read-only.
``perf_meta`` is separate from ``args``: it is written only by passes, never by the reader.

Records made by :func:`perfreport.tree.build_tree` keep their fields (``ts``, ``dur``, ``pid``,
``tid``, ``correlation``, ``ext_id``, ``seq``, ``args`` code, ``perf_meta``; for GPU events
``ts``, ``dur``, ``device``, ``stream``, ``correlation``, ``ext_id``, ``nbytes``, stream time)
in shared columns (a :class:`Columns`, by ``uid``), and ``cat``, ``name`` (a code column) and
the columns themselves are read from a per-tree, per-category subclass
(:func:`~perfreport.event_fields.column_kind`): an ``Op`` is 64 bytes plus its tuples, a
``GpuEvent`` 48 (CPython allocates in 16-byte classes). Records made with the constructor
(tests, graph-capture clones) hold their own values (80 and 64 bytes); the attributes read the
same either way, and a write to a built tree's record goes to its columns."""

from __future__ import annotations

from types import MappingProxyType
from typing import Any, Iterator

import msgspec

from perfreport.event_columns import NONE, SIDE, Columns, Sparse, column_value  # noqa: F401 (re-exported)
from perfreport.event_fields import _LAUNCH, _Timed, _int_prop, _kind, column_kind  # noqa: F401 (column_kind re-exported)

_EMPTY: MappingProxyType = MappingProxyType({})
_decode = msgspec.json.decode

# CPU-side categories kept in the tree
CPU_OP = "cpu_op"
USER_ANNOTATION = "user_annotation"
RUNTIME = "cuda_runtime"
DRIVER = "cuda_driver"
PYTHON = "python_function"

# GPU-side categories
KERNEL = "kernel"
MEMCPY = "gpu_memcpy"
MEMSET = "gpu_memset"
GPU_ANNOTATION = "gpu_user_annotation"


_SEQ = (tuple, list)  # what a ``_ch`` / ``_k`` slot holds for more than one (or none, empty)


def _seq_slot(slot: str):
    """``children`` / ``kernels``: the slot's tuple or list as it is, None for none, a lone record
    (a built tree's) as a tuple of one; a write stores the value given."""

    def get(self):
        v = getattr(self, slot)
        return v if v is None or v.__class__ in _SEQ else (v,)

    def set(self, v) -> None:
        setattr(self, slot, v)

    return property(get, set)


class Op(_Timed):
    """A CPU-side event: ``cpu_op``, ``user_annotation``, runtime/driver call (or python frame).

    ``parent``/``children`` nest events of one (pid, tid) by time (``children`` and
    ``kernels``: tuples in a built tree, lists in records made later). ``kernels`` holds the
    GPU events launched by this event itself: for a runtime call, the events it launched (plus, for a call
    outside any op, those of the launch calls nested in it); for a cpu_op or annotation,
    those of the launch calls nested in it (directly or through other launch calls),
    whether or not the tree made records for them ("direct kernels").
    """

    # + ("name", "_src") in a record made by the constructor (80 bytes); a built tree's record
    # reads both from its per-tree class (64 bytes: see event_fields.column_kind)
    __slots__ = ("uid", "parent", "_ch", "_k")
    _kinds: dict = {}
    cat: str  # a class attribute of the record's per-category subclass (see _kind)

    def __new__(cls, uid=None, name=None, cat=None, *args, **kw):
        return object.__new__(_kind(Op, cat) if cls is Op else cls)

    def __init__(
        self,
        uid: int,
        name: str,
        cat: str,
        pid,
        tid,
        ts: float,
        dur: float,
        args: dict | bytes | None = None,
        correlation: int | None = None,
        ext_id: int | None = None,
        seq: int | None = None,
    ):
        self.uid = uid
        self.name = name
        if isinstance(args, (bytes, bytearray)):
            args = _decode(args) if args else None
        # (ts, dur, pid, tid, correlation, ext_id, seq, args, perf_meta); ``seq`` is the
        # autograd "Sequence number" (links backward to forward)
        self._src = (ts, dur, pid, tid, correlation, ext_id, seq, args, None)
        self.parent: Op | None = None
        self._ch = None  # children: None, a tuple or list, or the one child itself (see below)
        self._k = None  # kernels: as ``_ch``

    # A built tree stores a lone child or kernel (84k and 102k of them at 650 MB) in the slot
    # itself, not in a 48-byte tuple of one; the properties hand out a sequence either way.
    children = _seq_slot("_ch")
    kernels = _seq_slot("_k")

    @property
    def pid(self):
        s = self._src
        return s[2] if s.__class__ is tuple else s.threads[s.thr[self.uid]][0]

    @property
    def tid(self):
        s = self._src
        return s[3] if s.__class__ is tuple else s.threads[s.thr[self.uid]][1]

    correlation = _int_prop("cs", 4, launch=True)
    ext_id = _int_prop("ext", 5)
    seq = _int_prop("cs", 6, launch=False)

    @property
    def args(self) -> dict:
        s = self._src
        a = s[7] if s.__class__ is tuple else s.args_table[s.args[self.uid]]
        return a if a is not None else _EMPTY

    @property
    def perf_meta(self):  # written only by passes
        s = self._src
        m = s[8] if s.__class__ is tuple else s.meta.get(self.uid)
        return m if m is not None else _EMPTY

    def set_meta(self, key: str, value: Any) -> None:
        s = self._src
        if s.__class__ is not tuple:
            s.meta.setdefault(self.uid, {})[key] = value
        elif s[8] is None:
            self._src = s[:8] + ({key: value},)
        else:
            s[8][key] = value

    @staticmethod
    def kernels_of(ops) -> "tuple[list[int], list[GpuEvent]]":
        """(each op's kernel count, all their kernels end to end) of ``ops``, in order, read
        from the slots (no tuple made for a lone kernel)."""
        return counts_and_flat([o._k for o in ops])

    @staticmethod
    def children_of(ops) -> "tuple[list[int], list[Op]]":
        """(each op's child count, all their children end to end) of ``ops``, as :meth:`kernels_of`."""
        return counts_and_flat([o._ch for o in ops])

    def ancestors(self) -> Iterator["Op"]:
        p = self.parent
        while p is not None:
            yield p
            p = p.parent

    def walk(self) -> Iterator["Op"]:
        """This op and all its descendants, depth first, in time order."""
        stack = [self]
        while stack:
            o = stack.pop()
            yield o
            if o.children:
                stack.extend(reversed(o.children))

    def subtree_kernels(self) -> list["GpuEvent"]:
        """Every GPU event launched anywhere in this subtree (each counted once)."""
        out: list[GpuEvent] = []
        for o in self.walk():
            if o.kernels and (o.parent is None or o.cat not in (RUNTIME, DRIVER)):
                out.extend(o.kernels)
        return out

    def __repr__(self) -> str:  # debugging aid
        return f"Op({self.uid}, {self.name!r}, {self.cat}, ts={self.ts}, dur={self.dur})"


def as_seq(slot) -> tuple | list:
    """A ``_ch`` / ``_k`` slot value (None, a tuple or list, or one record) as a sequence."""
    return () if slot is None else slot if slot.__class__ in _SEQ else (slot,)


def counts_and_flat(slots: list) -> tuple[list[int], list]:
    """(length of each, all end to end) of slot values: None, a tuple or list, or one record."""
    lens: list[int] = []
    flat: list = []
    n, ext, add = lens.append, flat.extend, flat.append
    for k in slots:
        if k is None:
            n(0)
        elif k.__class__ in _SEQ:
            n(len(k))
            ext(k)
        else:
            n(1)
            add(k)
    return lens, flat


class GpuEvent(_Timed):
    """A GPU-side event: kernel, memcpy, memset (or a gpu_user_annotation range)."""

    __slots__ = ("uid", "launcher")  # + ("name", "_src") as for Op: 64 bytes, a built tree's 48
    _kinds: dict = {}
    cat: str  # a class attribute of the record's per-category subclass (as for Op)

    def __new__(cls, uid=None, name=None, cat=None, *args, **kw):
        return object.__new__(_kind(GpuEvent, cat) if cls is GpuEvent else cls)

    def __init__(
        self,
        uid: int,
        name: str,
        cat: str,
        device,
        stream,
        ts: float,
        dur: float,
        correlation: int | None,
        ext_id: int | None = None,
        nbytes: int | None = None,
    ):
        self.uid = uid
        self.name = name
        self._src = (ts, dur, device, stream, correlation, ext_id, nbytes)
        self.launcher: Op | None = None  # the launch call's record if it has one, else the op

    @property
    def device(self):
        s = self._src
        return s[2] if s.__class__ is tuple else s.devstreams[s.ds[self.uid]][0]

    @property
    def stream(self):
        s = self._src
        return s[3] if s.__class__ is tuple else s.devstreams[s.ds[self.uid]][1]

    correlation = _int_prop("corr", 4)
    ext_id = _int_prop("ext", 5)
    nbytes = _int_prop("nbytes", 6)

    @property
    def launch_name(self) -> str | None:
        """The name of the runtime/driver call that launched this event (``cudaLaunchKernel``,
        ``hipExtModuleLaunchKernel`` ...), or None (linked by External id, or unlinked).

        The tree makes no record for most launch calls (see :mod:`perfreport.tree.build`):
        ``launcher`` is then the enclosing op and the call's name is kept in a column.
        """
        l = self.launcher
        if l is None:
            return None
        if l.cat in (RUNTIME, DRIVER):
            return l.name
        s = self._src
        if s.__class__ is tuple:
            return None
        k = s.lname[self.uid]
        return s.names[k] if k >= 0 else None

    @property
    def launch_call(self) -> tuple[float, float] | None:
        """``(ts, dur)`` in µs of the runtime/driver call that launched this event (for a graph
        node: the graph launch), or None: linked by ``External id`` only, unlinked, or a record
        made outside the reader (tests, graph-capture clones) without its call."""
        l = self.launcher
        if l is None:
            return None
        if l.cat in (RUNTIME, DRIVER):
            return (l.ts, l.dur)
        s = self._src
        lts = getattr(s, "lts", None) if s.__class__ is not tuple else None
        if lts is None:
            return None
        t = lts[self.uid]
        return None if t != t else (t, s.ldur[self.uid])  # NaN: no call record

    @property
    def op(self) -> Op | None:
        """The innermost cpu_op (or annotation) that launched this event, if any: the first
        event enclosing its launch call that is no launch call itself."""
        l = self.launcher
        while l is not None and l.cat in (RUNTIME, DRIVER):
            l = l.parent
        return l

    @property
    def owner(self) -> Op | None:
        """The record that has this event in its ``kernels`` as a direct kernel: :attr:`op`,
        or for a launch outside any op the outermost launch call around it (None: unlinked)."""
        l = self.launcher
        if l is None:
            return None
        while l.cat in (RUNTIME, DRIVER) and l.parent is not None:
            l = l.parent
        return l

    @property
    def stream_time(self) -> float:
        """Time on its (device, stream) with same-stream overlap counted once (the overlap is
        charged to the event that started first; see :func:`perfreport.tree.link.stream_exclusive`).
        Equals ``dur`` for an event that overlaps nothing. The op tables sum this."""
        s = self._src
        return s[1] if s.__class__ is tuple else s.excl[self.uid]

    def __repr__(self) -> str:
        return f"GpuEvent({self.uid}, {self.name[:40]!r}, {self.cat}, ts={self.ts}, dur={self.dur})"
