"""The result of :func:`perfreport.analyze`: sheets, notes, GPU spec, and its writers."""

from __future__ import annotations

import msgspec
from msgspec import field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # annotations only: command_line() and provenance() stay cheap for the CLI
    from perfreport.tables.sheet import Sheet


class Report(msgspec.Struct, dict=True):
    """One analyzed trace.

    * ``sheets``: the report's :class:`~perfreport.tables.Sheet` objects, in report order;
      :meth:`sheet` finds one by name (or unique prefix);
    * ``notes``: report-level facts (source, GPU spec used, trace facts, warnings), as in the
      workbook's ``notes`` sheet; ``sheet.notes`` hold each sheet's own notes;
    * ``spec``: the :class:`~perfreport.specs.GpuSpec` used for rooflines (None if none matched);
    * ``has_gpu``: False when the trace holds no GPU events (CPU-side sheets only);
    * ``coverage``: the :class:`~perfreport.tables.coverage.Coverage` statement (how much of the
      GPU time is modelled, and why not the rest); its lines are also in ``notes``;
    * ``timeline``: the HTML page's time-axis data (lanes, idle, steps; see
      :mod:`perfreport.tables.lanes`), None when the report was not made from a trace.

    The writers refuse (:class:`~perfreport.errors.BadInput`) to replace a file the report was
    read from: ``source``, ``inputs``, and a merged report's per-rank traces.
    """

    source: str
    sheets: list[Sheet]
    notes: list[str]
    spec: Any = None
    arch_msg: str = ""
    warnings: list[str] = field(default_factory=list)
    graph_capture_summary: str | None = None
    has_gpu: bool = True
    meta: dict = field(default_factory=dict)
    coverage: Any = None
    inputs: list = field(default_factory=list)  # other files it was read from (graph capture, config, models)
    timeline: Any = None  # the HTML page's time-axis data (tables/lanes.py)
    provenance: dict = field(default_factory=dict)

    def __repr__(self) -> str:
        """One line: source, sheets and their row counts, GPU spec, modelled share."""
        sheets = ", ".join(f"{s.name} ({len(s.rows)})" for s in self.sheets[:8])
        more = f", … {len(self.sheets) - 8} more" if len(self.sheets) > 8 else ""
        spec = self.spec.key if self.spec is not None else "none"
        cov = getattr(self.coverage, "modelled_pct", None)
        cov = f", modelled {cov:.1f}%" if isinstance(cov, (int, float)) else ""
        return (
            f"<{type(self).__name__} {self.source!r}: {len(self.sheets)} sheets [{sheets}{more}], GPU spec {spec}{cov}>"
        )

    def _repr_html_(self, top: int = 10) -> str:
        """A notebook cell: source and GPU spec, the coverage statement, the top ``top`` rows
        of ``unified_perf_summary`` (name, category, time, share, roofline %, bound, flags)."""
        from html import escape

        from perfreport.writers import numfmt
        from perfreport.writers.summary import coverage_lines, top_rows

        out = [f"<p><b>{escape(str(self.source))}</b> — {escape(self.arch_msg)}</p>"]
        out += [f"<p>{escape(line)}</p>" for line in coverage_lines(self)[:2]]
        rows = top_rows(self, top)
        if rows:
            cols = [("name", None), ("category", None), ("time", numfmt.time_us), ("share", numfmt.pct)]
            cols += [("roofline", numfmt.pct), ("bound", None), ("flags", None)]
            out.append("<table><tr>" + "".join(f"<th>{k}</th>" for k, _ in cols) + "</tr>")
            for r in rows:
                cells = [(f(r[k]) if f else ("" if r[k] is None else str(r[k]))) for k, f in cols]
                out.append("<tr>" + "".join(f"<td>{escape(c)}</td>" for c in cells) + "</tr>")
            out.append("</table>")
        out.append(f"<p>sheets: {escape(', '.join(self.sheet_names))}</p>")
        return "\n".join(out)

    @property
    def sheet_names(self) -> list[str]:
        return [s.name for s in self.sheets]

    def sheet(self, name: str) -> Sheet:
        """The sheet called ``name``, or the only one whose name starts with it (KeyError else)."""
        by = {s.name: s for s in self.sheets}
        if name in by:
            return by[name]
        hits = [n for n in by if n.startswith(name)]
        if len(hits) == 1:
            return by[hits[0]]
        if hits:
            raise KeyError(f"sheet {name!r} is ambiguous: matches {', '.join(hits)}")
        raise KeyError(f"no sheet {name!r} in this report; sheets: {', '.join(by)}")

    # -- writers -------------------------------------------------------------------------
    def own_inputs(self) -> dict[str, str]:
        """{path: what} of the files this report was read from (the writers never replace them)."""
        paths = [self.source, *self.inputs, *getattr(self, "rank_paths", {}).values()]
        return {str(p): "an input of this report" for p in paths if p and str(p) != "-"}

    def _refuse_input(self, path) -> None:
        from perfreport.writers.targets import refuse_input

        refuse_input(path, self.own_inputs())

    def to_excel(self, path: str | Path) -> list[str]:
        """Write the workbook atomically; returns warnings (e.g. Excel truncations)."""
        from perfreport.writers.excel import write_workbook
        from perfreport.writers.summary import coverage_lines

        self._refuse_input(path)
        return write_workbook(self.sheets, path, self.notes, spec=self.spec, coverage=coverage_lines(self))

    def to_html(self, path: str | Path, top: int = 50) -> Path:
        """Write the self-contained HTML page (roofline chart, GPU timeline, coverage, sortable
        table of the ``top`` rows) atomically to ``path``; returns the path."""
        from perfreport.writers.html import write_html

        self._refuse_input(path)
        return write_html(self, path, top)

    def to_csv_dir(self, directory: str | Path, protect: dict | None = None) -> list[Path]:
        """One ``<sheet>.csv`` per sheet in ``directory`` (created), and ``notes.csv`` (the
        workbook's notes sheet: coverage, GPU spec, provenance, trace facts); returns the paths."""
        from perfreport.writers.text import notes_sheet, write_csv_dir

        return write_csv_dir(
            [*self.sheets, notes_sheet(self)], directory, protect={**self.own_inputs(), **(protect or {})}
        )

    def to_dict(self) -> dict:
        """Plain data: ``{"source", "notes", "spec", "coverage", "sheets": {name: {"notes", "rows"}}}``."""
        from perfreport.writers.cells import rows

        return {
            "source": self.source,
            "notes": list(self.notes),
            "spec": self.spec.key if self.spec is not None else None,
            "coverage": self.coverage.to_dict() if self.coverage is not None else None,
            "provenance": dict(self.provenance),
            "sheets": {
                s.name: {"notes": list(s.notes), "rows": [dict(zip(map(str, s.columns), r)) for r in rows(s)]}
                for s in self.sheets
            },
        }

    def to_json(self, path: str | Path | None = None) -> str:
        """The report as JSON text (:meth:`to_dict`); also written atomically to ``path`` if given."""
        import orjson

        text = orjson.dumps(self.to_dict(), option=orjson.OPT_INDENT_2 | orjson.OPT_SERIALIZE_NUMPY).decode() + "\n"
        if path is not None:
            from perfreport.writers.atomic import atomic_path

            self._refuse_input(path)
            with atomic_path(path, suffix=".json") as tmp:
                Path(tmp).write_text(text, encoding="utf-8")
        return text


def provenance(command: str | None = None, sha256: str | None = None, **more) -> dict:
    """What made the report: ``perfreport version``, ``command line`` (``Python API`` when
    none is given), ``input SHA-256`` (of the trace file as stored; omitted when unknown), and
    any ``more`` items (e.g. one SHA-256 per rank); every output carries them in its notes."""
    from perfreport import __version__

    out = {"perfreport version": __version__, "command line": command or "Python API"}
    if sha256:
        out["input SHA-256"] = sha256
    out.update({k: v for k, v in more.items() if v})
    return out


def provenance_lines(prov: dict) -> list[str]:
    """``label: value`` note lines of :func:`provenance`'s dict."""
    return [f"{k}: {v}" for k, v in prov.items()]


def command_line(argv=None) -> str:
    """The command as typed: ``perfreport analyze t.json.gz -o r.xlsx`` (shell-quoted)."""
    import shlex
    import sys

    return shlex.join(["perfreport", *(sys.argv[1:] if argv is None else argv)])


def trace_facts(meta: dict) -> list[str]:
    """One-line facts from the trace's top-level metadata for the notes sheet."""
    out = []
    di = meta.get("distributedInfo")
    if isinstance(di, dict) and "rank" in di:
        out.append(f"rank {di.get('rank')} of {di.get('world_size', '?')} (distributedInfo)")
    devs = meta.get("deviceProperties")
    if isinstance(devs, list) and devs:
        names = sorted({str(d.get("name") or "(no name)") for d in devs if isinstance(d, dict)})
        out.append(f"deviceProperties: {len(devs)} device(s): {', '.join(names)}")
    for k in ("cuda_runtime_version", "hip_runtime_version", "roctracer_version", "schemaVersion"):
        if k in meta:
            out.append(f"{k}: {meta[k]}")
    return out


__all__ = ["Report", "command_line", "provenance", "provenance_lines", "trace_facts"]
