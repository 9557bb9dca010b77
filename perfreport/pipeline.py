"""The analyze flow, end to end: read -> tree -> passes -> models/tables -> :class:`Report`.

:func:`analyze` is the public entry point (``perfreport.analyze``); the CLI is a thin layer
over it. :func:`load_tree` stops after the passes (for tests and tools that walk the tree).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, BinaryIO, Callable, Iterable, Union

from perfreport.errors import BadInput
from perfreport.read import read_trace

if TYPE_CHECKING:
    from perfreport.report import Report
    from perfreport.tree import TraceTree

# the later stages (tree, passes, tables: numpy and every model, ~0.25 CPU s) are imported once
# the trace has been read, so a trace the reader refuses costs only the reader's imports

TraceInput = Union[str, "os.PathLike[str]", BinaryIO]


def load_tree(
    spec: TraceInput,
    *,
    keep_python: bool = False,
    passes: bool = True,
    graph_capture: str | None = None,
    model_config=None,
    on_progress: Callable[[int], None] | None = None,
    steps: str | None = None,
    on_stage: Callable[[str], None] | None = None,
) -> TraceTree:
    """Read ``spec`` (path, ``-`` or a binary file object), build the tree, merge a
    graph-capture trace, keep only the ``steps`` asked for (``--steps``: ``A:B`` or ``N,N``; the
    tree's ``steps_note`` says what was kept), run the passes. ``on_stage(text)`` is told when
    each stage after the read starts (the CLI's progress display)."""
    stage = on_stage or (lambda _text: None)
    raw = read_trace(_spec(spec), keep_python=keep_python, on_progress=on_progress)
    from perfreport.passes import run_passes
    from perfreport.tree import build_tree

    warnings = list(raw.warnings)
    stage("building the tree")
    tree = build_tree(raw)
    tree.input_sha256 = raw.sha256
    tree.warnings[:0] = warnings  # the reader's (repairs, ignored metadata) first
    tree.model_config = _model_config(model_config)
    if graph_capture:
        from perfreport.tree.graph_capture import apply_capture_option

        tree.graph_capture_summary = apply_capture_option(tree, str(graph_capture))
    tree.steps_note = _select_steps(tree, steps)
    if passes:
        stage("running the passes")
        run_passes(tree)
    return tree


def analyze(
    trace: TraceInput,
    *,
    arch=None,
    basis: str = "peak",
    graph_capture: str | None = None,
    model_config=None,
    models: Iterable[str] = (),
    short_kernel_us: float = 10.0,
    linked_only: bool = False,
    on_progress: Callable[[int], None] | None = None,
    on_tree: Callable[[TraceTree], None] | None = None,
    steps: str | None = None,
    target_roofline: float = 0.8,
    timeline: bool = True,
    on_stage: Callable[[str], None] | None = None,
    command: str | None = None,
    tune_malloc: bool = False,
) -> Report:
    """Analyze one trace and return its :class:`Report` (sheets, notes, spec).

    ``trace``: a path, ``"-"`` (stdin) or a binary file object (gzip detected by content).
    ``arch``: a spec name (``perfreport archs``), a spec JSON path, a ``GpuSpec``, or None to
    detect the GPU from the trace's ``deviceProperties``. ``basis``: ``peak`` or ``achievable``.
    ``model_config``: a Hugging Face ``config.json`` path or a ``ModelConfig``.
    ``models``: Python files registering extra perf models. Bad input raises
    :class:`perfreport.errors.BadInput` (one-line message naming the file).
    ``on_tree``: called with the tree after the sheets are built, before its records are freed
    (the multi-rank worker reads the collective calls there).
    ``steps``: analyse only these steps (``"3:8"``, ``"3,5"``; see :mod:`perfreport.tree.steps`).
    ``target_roofline``: share of roofline (0-1] the ``fix_first`` sheet assumes a row could reach.
    ``timeline``: build the HTML page's time-axis data (``Report.timeline``); False saves its cost
    (~0.07x the analysis) when no page will be written.
    ``on_stage(text)``: told when each stage after the read starts (tree, passes, sheets).
    ``command``: the command line recorded in the notes (the CLI passes its own; default:
    "Python API"). ``tune_malloc``: let the reader pin glibc's mmap/trim thresholds for this
    process (lower peak RSS on big traces; a process-wide change, hence off unless asked;
    :mod:`perfreport.read.heap`).
    """
    if basis not in ("peak", "achievable"):
        raise BadInput("--basis", f"must be peak or achievable, not {basis!r}")
    if not (isinstance(target_roofline, (int, float)) and 0 < target_roofline <= 1):
        raise BadInput("--target-roofline", f"must be a share in (0, 1], not {target_roofline!r}")
    if tune_malloc:
        from perfreport.read import heap

        heap.enable()
    for m in models:
        from perfreport.models.registry import load_user_models

        _load_models_file(m, load_user_models)
    tree = load_tree(
        trace,
        graph_capture=graph_capture,
        model_config=model_config,
        on_progress=on_progress,
        steps=steps,
        on_stage=on_stage,
        passes=False,
    )
    from perfreport.passes import run_passes
    from perfreport.tree.frozen import records_frozen

    with records_frozen():  # the records live until release(): no collection walks them meanwhile
        if on_stage is not None:
            on_stage("running the passes")
        run_passes(tree)
        if on_stage is not None:
            on_stage("building the sheets")
        from perfreport.report import Report, provenance, provenance_lines, trace_facts
        from perfreport.tables import build_tables

        spec, arch_msg = _spec_for(tree, arch, basis)
        kept: dict = {}
        if spec is not None and basis == "achievable" and spec.peak_fallback:
            tree.warnings.append(achievable_warning(spec))
        sheets, coverage = build_tables(
            tree,
            keep=kept if timeline else None,
            short_kernel_us=short_kernel_us,
            include_unlinked=not linked_only,
            spec=spec,
            target_roofline=target_roofline,
            steps_note=tree.steps_note,
        )
        prov = provenance(command, tree.input_sha256)
        notes = (
            [f"source: {tree.source}", arch_msg] + provenance_lines(prov) + trace_facts(tree.meta) + [tree.steps_note]
        )
        notes += coverage.lines() if coverage is not None else []  # the one coverage statement
        if tree.graph_capture_summary:
            notes.append(tree.graph_capture_summary)
        if tree.model_config is not None:
            notes.append(f"model config: {tree.model_config.source}")
            if tree.sharding:
                notes.append(tree.sharding)
        notes.extend(tree.warnings)
        report = Report(
            source=tree.source,
            sheets=sheets,
            notes=notes,
            spec=spec,
            arch_msg=arch_msg,
            warnings=list(tree.warnings),
            graph_capture_summary=tree.graph_capture_summary,
            has_gpu=bool(tree.gpu),
            meta=tree.meta,
            coverage=coverage,
            timeline=kept.get("timeline"),
            inputs=[
                str(x)
                for x in (graph_capture, getattr(model_config, "source", model_config), *models)
                if isinstance(x, (str, os.PathLike))
            ],
            provenance=prov,
        )
        if on_tree is not None:
            on_tree(tree)
    tree.release()  # sheets hold plain values: free the records before writing
    return report


def _select_steps(tree: TraceTree, steps: str | None) -> str:
    from perfreport.tree.steps import find_steps, restrict, select

    found = find_steps(tree)
    if steps is not None:
        return restrict(tree, select(found, steps))
    if not found:
        return "steps: none found (no ProfilerStep#N, iteration annotation or graph replay); the whole trace analysed"
    nums = f"{found[0].number}..{found[-1].number}" if len(found) > 1 else f"{found[0].number}"
    return f"steps: {len(found)} {found[0].source} step(s) ({nums}), all analysed (--steps picks some)"


def achievable_warning(spec) -> str:
    """``--basis achievable`` on a spec lacking some achievable figures: they fall back to the
    datasheet peak (never silently): the warning names them."""
    none = len(spec.peak_fallback) == len(spec.peaks) + (spec.mem_bw_tbps is not None)
    what = "no achievable figures at all" if none else "no achievable figure for " + ", ".join(spec.peak_fallback)
    return (
        f"--basis achievable: the {spec.name} spec has {what}; "
        f"{'every figure stays' if none else 'those stay'} at the datasheet peak"
    )


def _registered() -> set:
    from perfreport.models.registry import MODEL_PATTERNS, MODELS

    return set(MODELS.values()) | {cls for _, cls in MODEL_PATTERNS}


def _load_models_file(path, load) -> None:
    """Load a ``--models`` file; a model needing a ``perf_meta`` key that no pass writes is
    bad input (its figures would silently lack that input)."""
    from perfreport.passes import written_keys

    before = _registered()
    load(path)
    known = written_keys()
    for cls in sorted(_registered() - before, key=lambda c: c.__name__):
        missing = [k for k in getattr(cls, "needs", ()) if k not in known]
        if missing:
            raise BadInput(
                str(path),
                f"model {cls.__name__} needs perf_meta {', '.join(missing)}, "
                f"which no pass writes (passes write: {', '.join(sorted(known))})",
            )


def _spec(spec: TraceInput):
    if isinstance(spec, os.PathLike):
        return os.fspath(spec)
    return spec


def _model_config(cfg):
    if cfg is None or not isinstance(cfg, (str, os.PathLike)):
        return cfg
    from perfreport.read.model_config import load_model_config

    return load_model_config(cfg)


def _spec_for(tree: TraceTree, arch, basis: str):
    from perfreport.specs import GpuSpec, close_specs, detect_arch, load_arch

    if isinstance(arch, GpuSpec):
        return arch, f"GPU spec: {arch.name} (given, {arch.basis} figures)"
    if arch:
        spec = load_arch(str(arch), basis=basis)
        return spec, f"GPU spec: {spec.name} (from --arch, {spec.basis} figures)"
    spec = detect_arch(tree.meta.get("deviceProperties"))
    if spec is not None and basis != "peak":
        spec = load_arch(spec.key, basis=basis)
    if spec is not None:
        return spec, f"GPU spec: {spec.name} (detected from deviceProperties, {spec.basis} figures)"
    close = close_specs(tree.meta.get("deviceProperties"))
    hint = (
        f"; closest built-in specs: {', '.join(s.key for s in close)} (pass --arch {close[0].key}, "
        "or --arch FILE.json with the GPU's own figures; perfreport archs lists them)"
        if close
        else " (pass --arch KEY from perfreport archs, or --arch FILE.json)"
    )
    return None, (
        f"GPU spec: none matched the trace's deviceProperties{_devices_seen(tree.meta)}; roofline columns left empty{hint}"
    )


def _devices_seen(meta: dict) -> str:
    devs = meta.get("deviceProperties")
    if not isinstance(devs, list) or not devs:
        return " (the trace has none)"
    names = sorted({str(d.get("name") or "(no name)") for d in devs if isinstance(d, dict)})
    return f" (saw: {', '.join(names)})" if names else ""


__all__ = ["analyze", "load_tree"]
