"""The coverage statement: how much of the GPU time the report could model, and why not the rest.

Built from the rows of ``unified_perf_summary`` (every GPU event exactly once), so the parts add
up to the total GPU time (kernels, memcpy, memset; stream time, so kernels overlapping on one
stream count once, as in every op table). :func:`perfreport.tables.build_tables` checks that sum
with the conservation check (``tables/conservation.check_total``) on every report:

* ``modelled``: rows with a roofline time (a perf model evaluated and the spec has its peak),
  except ``model inputs suspect`` rows: above 100% of roofline with no cause that can cover
  the excess (:func:`perfreport.tables.flags.above_roofline`). Their figures stay in the row,
  but their time is unmodelled under that reason, so the headline never counts an impossible
  figure (the headline names their share when there is any);
* ``communication``: NCCL/RCCL kernels of the other rows;
* ``memcpy/memset``: copies and fills of the other rows;
* ``unmodelled`` by reason, for the rest of those rows' time: ``model inputs suspect``,
  ``no shapes recorded (record_shapes was off)`` (an op with a model but no ``Input Dims``,
  ``Input type`` or ``Concrete Inputs`` at all: the profiler ran without ``record_shapes=True``,
  so no model can read it), ``no model for the op``, ``model error`` (each error text kept in ``model_errors``), ``no roofline figure`` (model
  evaluated but no spec, no bytes, or no peak for its compute spec), ``graph replay without
  shapes`` (kernels of a CUDA/HIP graph launch with no capture trace to attribute them),
  ``no CPU launch in the window`` (unlinked kernels), ``inside a user annotation only`` (the
  innermost launcher is an annotation, not an op), ``launched outside any op`` (a runtime call
  at the top of a thread).

Traces without GPU events have nothing to cover: ``basis`` then says the times are CPU op times.

Graph replays (the rows of ``GRAPH_CATEGORY``):

* :func:`split_graph_kernels`: an op's direct kernels split into its own and those of each
  CUDA/HIP graph launch inside it, so a graph's kernels form their own row under the launch
  (``hipGraphLaunch``/``cudaGraphLaunch``) instead of disappearing into the enclosing op or
  annotation (an SGLang ``step[DECODE bs=32]`` held 99% of GPU time that way).
* :func:`graph_reason`: why such a row has no model: a replay records no shapes, so without
  the capture-time trace (``--graph-capture``) nothing can be modelled.

This statement is the report's only statement of coverage: the console summary, the ``notes``
sheet, the HTML page, ``--format json`` and ``Report.to_dict`` all print :meth:`Coverage.lines`
/ :meth:`Coverage.to_dict` of the same object (tests/writers/test_summary.py compares them).
"""

from __future__ import annotations

import re
import msgspec
from msgspec import field

from perfreport.events import DRIVER, RUNTIME
from perfreport.tables import columns as C

GRAPH_LAUNCH = re.compile(r"(hip|cuda|cu)GraphLaunch")
GRAPH_CATEGORY = "graph replay"
NO_CAPTURE = "graph replay without a capture trace: shapes unknown"
UNMATCHED = "graph replay kernels the capture trace did not match: shapes unknown"
GRAPH_HINT = "give --graph-capture"  # beside the graph-replay share when no capture was given


def is_graph_launch(op) -> bool:
    return op is not None and op.cat in (RUNTIME, DRIVER) and GRAPH_LAUNCH.match(op.name) is not None


def split_graph_kernels(kernels):
    """(own kernels, [(graph launch op, its kernels), ...]) of one op's direct kernels."""
    own, graphs = [], {}
    for g in kernels:
        l = g.launcher
        if is_graph_launch(l):
            graphs.setdefault(id(l), (l, []))[1].append(g)
        else:
            own.append(g)
    return own, list(graphs.values())


def graph_reason(tree) -> str:
    return UNMATCHED if getattr(tree, "graph_capture", None) is not None else NO_CAPTURE


MODELLED, COMM, MEMCPY = "modelled", "communication", "memcpy/memset"
NO_MODEL = "no model for the op"
MODEL_ERROR = "model error"
NO_ROOFLINE = "no roofline figure"
GRAPH = "graph replay without shapes"
UNLINKED = "no CPU launch in the window"
ANNOTATION = "inside a user annotation only"
OUTSIDE = "launched outside any op"
SUSPECT = "model inputs suspect"  # = tables/flags.SUSPECT: a figure no cause can make true
NO_SHAPES = "no shapes recorded (record_shapes was off)"  # a modelled op without Input Dims at all
REASONS = (SUSPECT, NO_SHAPES, NO_MODEL, MODEL_ERROR, NO_ROOFLINE, GRAPH, UNLINKED, ANNOTATION, OUTSIDE)
TOP = 5


class Coverage(msgspec.Struct):
    """The coverage split of one report (all times µs; see the module docstring)."""

    total_us: float = 0.0
    modelled_us: float = 0.0
    communication_us: float = 0.0
    memcpy_us: float = 0.0
    unmodelled_us: dict[str, float] = field(default_factory=dict)  # reason -> µs
    model_errors: dict[str, float] = field(default_factory=dict)  # error text -> µs
    top_unmodelled: list[dict] = field(default_factory=list)  # name, reason, time (µs), percent
    basis: str = "GPU time"
    hints: dict[str, str] = field(default_factory=dict)  # reason -> what would model it

    @property
    def unmodelled_total_us(self) -> float:
        return float(sum(self.unmodelled_us.values()))

    @property
    def parts_us(self) -> float:
        """Sum of the parts; equals ``total_us`` (tested on every trace)."""
        return self.modelled_us + self.communication_us + self.memcpy_us + self.unmodelled_total_us

    def pct(self, us: float) -> float:
        return 100.0 * us / self.total_us if self.total_us else 0.0

    @property
    def modelled_pct(self) -> float:
        """Modelled share of the total in %, what ``--min-coverage`` compares (0 with no time)."""
        return self.pct(self.modelled_us)

    def headline(self, who: str = "") -> str:
        """The first line: the total and its four shares. ``who`` names whose time it is
        (``"rank 3"``) when a report states several (multi/coverage.py)."""
        if not self.total_us:
            return f"coverage: {who + ' has ' if who else ''}no {self.basis} to cover"
        whose = f"{who}'s " if who else ""
        return (
            f"coverage of {whose}{self.total_us:,.1f} µs {self.basis}: modelled {self.modelled_pct:.1f}%"
            f", communication {self.pct(self.communication_us):.1f}%"
            f", memcpy/memset {self.pct(self.memcpy_us):.1f}%"
            f", unmodelled {self.pct(self.unmodelled_total_us):.1f}%"
            + (
                f" (of which {SUSPECT} {self.pct(self.unmodelled_us[SUSPECT]):.1f}%)"
                if self.unmodelled_us.get(SUSPECT, 0.0) > 0
                else ""
            )
        )

    def lines(self, shorten=None) -> list[str]:
        """The statement as plain text lines (console summary, notes sheet).

        ``shorten(name) -> str``, when given, shortens the op / kernel names of the top
        unmodelled list (a kernel name can run to thousands of characters)."""
        out = [self.headline()]
        if not self.total_us:
            return out
        by = sorted(((t, r) for r, t in self.unmodelled_us.items() if t > 0), reverse=True)
        if by:
            out.append(
                "coverage: unmodelled by reason: "
                + "; ".join(
                    f"{r} {self.pct(t):.1f}% ({t:,.1f} µs{'; ' + self.hints[r] if r in self.hints else ''})"
                    for t, r in by
                )
            )
        errs = sorted(((t, e) for e, t in self.model_errors.items()), reverse=True)[:TOP]
        if errs:
            out.append("coverage: model errors: " + "; ".join(f"{e} ({t:,.1f} µs)" for t, e in errs))
        if self.top_unmodelled:
            out.append(
                "coverage: top unmodelled ops: "
                + "; ".join(
                    f"{shorten(r['name']) if shorten else r['name']} {r['time (µs)']:,.1f} µs ({r['reason']})"
                    for r in self.top_unmodelled
                )
            )
        return out

    def text(self) -> str:
        """:meth:`lines` as one line, joined by ``" | "`` (the console summary, one notes cell)."""
        return " | ".join(self.lines())

    def to_dict(self) -> dict:
        return {
            "basis": self.basis,
            "total (µs)": self.total_us,
            "modelled (µs)": self.modelled_us,
            C.MODELLED_PCT: self.modelled_pct,
            "communication (µs)": self.communication_us,
            "memcpy/memset (µs)": self.memcpy_us,
            "unmodelled (µs)": dict(self.unmodelled_us),
            "model errors (µs)": dict(self.model_errors),
            "top unmodelled": [dict(r) for r in self.top_unmodelled],
            "hints": dict(self.hints),
        }


def coverage_from_dict(d: dict) -> Coverage:
    """The :class:`Coverage` that :meth:`Coverage.to_dict` wrote (a multi-rank worker sends it)."""
    return Coverage(
        total_us=d["total (µs)"],
        modelled_us=d["modelled (µs)"],
        communication_us=d["communication (µs)"],
        memcpy_us=d["memcpy/memset (µs)"],
        unmodelled_us=dict(d["unmodelled (µs)"]),
        model_errors=dict(d["model errors (µs)"]),
        top_unmodelled=[dict(r) for r in d["top unmodelled"]],
        basis=d["basis"],
        hints=dict(d.get("hints", {})),
    )


def merge_coverage(covs: list[Coverage], basis: str) -> Coverage:
    """The sum of several statements (the ranks of a multi-rank run): every part added, the top
    unmodelled ops re-ranked by their summed time (each rank keeps its top :data:`TOP` only, so a
    name's sum counts the ranks where it made that list)."""
    out = Coverage(basis=basis)
    by_name: dict[tuple, float] = {}
    for c in covs:
        out.total_us += c.total_us
        out.modelled_us += c.modelled_us
        out.communication_us += c.communication_us
        out.memcpy_us += c.memcpy_us
        for k, v in c.unmodelled_us.items():
            out.unmodelled_us[k] = out.unmodelled_us.get(k, 0.0) + v
        for k, v in c.model_errors.items():
            out.model_errors[k] = out.model_errors.get(k, 0.0) + v
        for r in c.top_unmodelled:
            key = (r[C.NAME], r[C.REASON])
            by_name[key] = by_name.get(key, 0.0) + r["time (µs)"]
        out.hints.update(c.hints)
    _finish(out, out.unmodelled_us, by_name)
    return out


def _finish(cov: Coverage, un: dict, by_name: dict) -> None:
    """Set ``cov``'s unmodelled parts (``un``: reason -> µs, in :data:`REASONS` order, others
    after) and its top :data:`TOP` unmodelled (name, reason) of ``by_name`` by time."""
    cov.unmodelled_us = {k: un[k] for k in REASONS if k in un} | {k: v for k, v in un.items() if k not in REASONS}
    top = sorted(((t, n, p) for (n, p), t in by_name.items() if t > 0), key=lambda x: -x[0])[:TOP]
    cov.top_unmodelled = [{C.NAME: n, C.REASON: p, "time (µs)": t, C.PERCENT_PCT: cov.pct(t)} for t, n, p in top]


def row_parts(*, modelled: bool, total: float, comm: float, memcpy: float, reason: str) -> dict:
    """One unified row's share of each coverage part: all of it modelled, or its communication
    and memcpy/memset kernels split off and the rest under ``reason``."""
    if modelled:
        return {MODELLED: total}
    rest = total - comm - memcpy
    out = {COMM: comm, MEMCPY: memcpy}
    out[reason] = out.get(reason, 0.0) + rest
    return out


def build_coverage(rows: list[dict], *, has_gpu: bool = True, hints: dict | None = None) -> Coverage:
    """The coverage of unified rows carrying ``_parts`` (from :func:`row_parts`),
    ``time sum (µs)``, ``name`` and, for model errors, ``reason``. ``hints``: reason -> what
    would model that time (``give --graph-capture``), printed beside the reason's share."""
    cov = Coverage(basis="GPU time" if has_gpu else "CPU op time (no GPU events)")
    un: dict[str, float] = {}
    by_name: dict[tuple, float] = {}
    for r in rows:
        cov.total_us += r[C.TIME_SUM_US]
        for part, us in r["_parts"].items():
            if part == MODELLED:
                cov.modelled_us += us
            elif part == COMM:
                cov.communication_us += us
            elif part == MEMCPY:
                cov.memcpy_us += us
            else:
                un[part] = un.get(part, 0.0) + us
                if part == MODEL_ERROR:
                    cov.model_errors[r[C.REASON]] = cov.model_errors.get(r[C.REASON], 0.0) + us
                k = (r[C.NAME], part)
                by_name[k] = by_name.get(k, 0.0) + us
    _finish(cov, un, by_name)
    cov.hints = {k: v for k, v in (hints or {}).items() if un.get(k, 0.0) > 0}
    return cov


__all__ = [
    "Coverage",
    "build_coverage",
    "coverage_from_dict",
    "merge_coverage",
    "row_parts",
    "REASONS",
    "MODELLED",
    "COMM",
    "MEMCPY",
    "NO_MODEL",
    "MODEL_ERROR",
    "NO_ROOFLINE",
    "GRAPH",
    "UNLINKED",
    "ANNOTATION",
    "OUTSIDE",
    "SUSPECT",
    "NO_SHAPES",
    "GRAPH_CATEGORY",
    "NO_CAPTURE",
    "UNMATCHED",
    "is_graph_launch",
    "split_graph_kernels",
    "graph_reason",
    "GRAPH_HINT",
]
