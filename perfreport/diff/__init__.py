"""``perfreport diff A B``: compare two traces, or two reports perfreport wrote.

:func:`diff` returns a :class:`~perfreport.report.Report` with the sheets ``diff_summary``,
``diff_ops`` and ``diff_gpu_timeline`` (see :mod:`perfreport.diff.sheets` for the columns and
:mod:`perfreport.diff.match` for the matching rules), so the usual writers apply.
"""

from __future__ import annotations

from typing import Callable

from perfreport.diff.context import compare
from perfreport.diff.gate import regressions
from perfreport.diff.load import Side, load_side


def diff(
    a,
    b,
    *,
    arch_a=None,
    arch_b=None,
    basis: str = "peak",
    command: str | None = None,
    on_side: Callable[[str, str], None] | None = None,
    **analyze_kw,
):
    """Diff ``a`` against ``b`` (paths of traces, report JSON files or CSV dirs); ``command``:
    the command line the notes record (default "Python API"); ``on_side(label, path)`` is
    told before each side is loaded ("A", then "B": the CLI's progress display)."""
    if on_side is not None:
        on_side("A", str(a))
    sa = load_side(a, analyze_kw=dict(analyze_kw, arch=arch_a, basis=basis))
    if on_side is not None:
        on_side("B", str(b))
    sb = load_side(b, analyze_kw=dict(analyze_kw, arch=arch_b, basis=basis))
    return diff_sides(sa, sb, inputs=[str(a), str(b)], command=command)


def diff_sides(sa: Side, sb: Side, inputs=None, command: str | None = None):
    """The diff :class:`~perfreport.report.Report` of two loaded sides (``inputs``: the paths
    given, default the sides' sources; ``command``: the command line the notes record)."""
    from perfreport.diff.sheets import build_diff_sheets
    from perfreport.report import Report, provenance, provenance_lines

    sheets = build_diff_sheets(sa, sb)
    _, mismatch = compare(sa.context, sb.context)
    prov = provenance(command, None, **{"input SHA-256 (A)": sa.sha256, "input SHA-256 (B)": sb.sha256})
    notes = mismatch + [f"A: {sa.source} ({sa.kind})", f"B: {sb.source} ({sb.kind})"]
    notes += [f"A {n}" for n in sa.notes] + [f"B {n}" for n in sb.notes] + provenance_lines(prov)
    return Report(
        source=f"{sa.source} vs {sb.source}",
        sheets=sheets,
        notes=notes,
        arch_msg="",
        has_gpu=True,
        inputs=list(inputs) if inputs is not None else [sa.source, sb.source],
        provenance=prov,
    )


__all__ = ["diff", "diff_sides", "regressions", "load_side", "Side"]
