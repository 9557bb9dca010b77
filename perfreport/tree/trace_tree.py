"""The tree container handed to passes, tables and writers."""

from __future__ import annotations

from collections import defaultdict
from typing import Iterable

from perfreport.events import CPU_OP, GpuEvent, Op

# ops + GPU events from which release() collects the tree's cycles at once (a 3 MB trace: ~2,000)
COLLECT_FROM = 20_000


class TraceTree:
    """All kept events of one trace.

    * ``meta``  : top-level trace metadata (``deviceProperties``, ``distributedInfo``, ...)
    * ``source``: the input's name as given by the user (for messages)
    * ``ops``   : the CPU-side events (cpu_op, user_annotation, runtime/driver calls) the report
      needs, by ts, with uids 0..len-1 (the index, until graph-capture ops are merged). With
      GPU events: events with GPU work in their subtree and their ancestors, all
      user_annotations, and the launch calls that need a record (graph launches, launches
      outside any op ...; the others are folded into their op, see ``GpuEvent.launch_name``);
      without GPU events (or for graph-capture traces): every CPU event. See
      :mod:`perfreport.tree.build`.
    * ``n_events``: every event of the trace, kept or not
    * ``gpu``   : every GPU event (kernel, memcpy, memset), by ts
    * ``gpu_annotations``: ``gpu_user_annotation`` ranges (not counted as GPU work)
    * ``roots`` : top-level CPU events per (pid, tid)
    * ``unlinked``: GPU events no launch claims (still counted in the timeline)
    * ``gpu_comm_args``: {GPU event uid: args} of the NCCL/RCCL kernels that carry their
      collective's fields (``Collective name``, ``Seq`` ...; see perfreport.multi.collectives)
    * ``model_config``: the :class:`~perfreport.read.model_config.ModelConfig` given with
      ``--model-config`` (None without one); passes read it, models never do
    * ``sharding``: the tensor-parallel degree the "sharding" pass inferred, as a note line
    """

    def __init__(
        self,
        source: str,
        meta: dict,
        ops: list[Op],
        gpu: list[GpuEvent],
        gpu_annotations: list[GpuEvent],
        roots: list[Op],
    ):
        self.source = source
        self.meta = meta
        self.ops = ops
        self.gpu = gpu
        self.gpu_annotations = gpu_annotations
        self.roots = roots
        self._by_name: dict[str, list[Op]] | None = None
        self.warnings: list[str] = []
        self.process_names: dict = {}
        self.process_labels: dict = {}
        self.thread_names: dict = {}
        self.n_events = 0
        self.graph_capture_summary: str | None = None
        self.model_config = None
        self.sharding: str | None = None  # passes/sharding.py: the inferred degree, for the notes
        self.gpu_comm_args: dict[int, dict] = {}
        self.steps_note: str = ""  # what --steps kept (perfreport.tree.steps)
        self.input_sha256: str | None = None  # of the trace file's bytes (the report's notes)

    def release(self) -> None:
        """Drop the records (parent/child links are cycles: collect them) once sheets are built.
        A small tree's cycles are left to the automatic collector: a full collection walks every
        object of the process (~0.02 CPU s, whatever the tree's size) to free a few hundred KB."""
        import gc

        big = len(self.ops) + len(self.gpu) >= COLLECT_FROM
        self.ops = []
        self.gpu = []
        self.roots = []
        self.gpu_annotations = []
        self.gpu_comm_args = {}
        self._by_name = None
        if big:
            gc.collect()

    @property
    def unlinked(self) -> list[GpuEvent]:
        return [g for g in self.gpu if g.launcher is None]

    def invalidate_index(self) -> None:
        """Forget the by-name index after ``ops`` changed (graph-capture merge, ``--steps``)."""
        self._by_name = None

    def _index(self) -> dict[str, list[Op]]:
        if self._by_name is None:
            d: dict[str, list[Op]] = defaultdict(list)
            for o in self.ops:
                d[o.name].append(o)
            self._by_name = dict(d)
        return self._by_name

    def ops_named(self, name: str) -> list[Op]:
        """The ops named ``name``, in the order of ``ops``."""
        return self._index().get(name, [])

    def op_names(self):
        """The distinct names of ``ops`` (a view of the by-name index's keys)."""
        return self._index().keys()

    def has_op(self, name: str) -> bool:
        return bool(self.ops_named(name))

    def cpu_ops(self) -> Iterable[Op]:
        return (o for o in self.ops if o.cat == CPU_OP)
