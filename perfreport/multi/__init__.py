"""Multi-rank input: many traces (a directory, files, a glob) -> one merged :class:`Report`.

Each trace is analyzed on its own (:mod:`perfreport.multi.worker`) by the chosen engine
(:mod:`perfreport.multi.engines`: serial, a process pool, or Ray); only compact sheets come
back, and :mod:`perfreport.multi.merge` builds the merged sheets (``ranks``, ``ops_by_rank``,
``gpu_timeline_by_rank``, ``collectives``) the same way whatever ran them.
"""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path

from perfreport.errors import BadInput

# name -> module: imported on first use, so that the command line's check of its inputs
# (perfreport.multi.inputs) does not import the pipeline and the engines
_LAZY = {
    "ENGINES": "perfreport.multi.engines",
    "cores": "perfreport.multi.engines",
    "expand_inputs": "perfreport.multi.inputs",
}


def analyze_ranks(
    inputs,
    *,
    jobs: int | None = None,
    engine: str | None = None,
    ray_address: str | None = None,
    per_rank_dir=None,
    keep_going: bool = False,
    quiet: bool = False,
    **analyze_kw,
):
    """Analyze every trace named by ``inputs`` (a path, or a list of paths, dirs, globs) and
    merge them. ``per_rank_dir``: also write one workbook per rank there (by the workers,
    into a staging directory; moved into place with the run's other outputs when the
    :func:`~perfreport.writers.atomic.transaction` commits, removed if it fails).
    ``keep_going``: a trace that cannot be read is left out (``report.left_out`` names it and
    why) instead of ending the run; BadInput still when none can be read.
    ``analyze_kw``: the options of :func:`perfreport.analyze` (arch, basis, ...)."""
    from perfreport.writers.atomic import transaction

    with transaction():
        return _analyze_ranks(inputs, jobs, engine, ray_address, per_rank_dir, keep_going, quiet, analyze_kw)


def _analyze_ranks(inputs, jobs, engine, ray_address, per_rank_dir, keep_going, quiet, analyze_kw):
    from perfreport.multi.checks import checked_rank, mixed_gpus
    from perfreport.multi.coverage import RankCoverage
    from perfreport.multi.engines import run_all
    from perfreport.multi.inputs import assign_ranks, expand_inputs, rank_from_name
    from perfreport.multi.merge import merged_sheets
    from perfreport.multi.report import MultiReport
    from perfreport.multi.worker import per_rank_name
    from perfreport.report import provenance, provenance_lines

    single = isinstance(inputs, (str, os.PathLike))
    paths = expand_inputs([str(inputs)] if single else [str(x) for x in inputs])
    if per_rank_dir is not None:
        dup = [n for n, c in Counter(per_rank_name(p) for p in paths).items() if c > 1]
        if dup:
            raise BadInput(str(per_rank_dir), f"two traces would both write {dup[0]}; rename one")
    from perfreport.writers.atomic import _ACTIVE, staging_dir

    stage = staging_dir(per_rank_dir) if per_rank_dir is not None else None
    opts = dict(analyze_kw, per_rank_dir=str(stage) if stage is not None else None)
    left_out: list[str] | None = [] if keep_going else None
    results = run_all(paths, opts, jobs=jobs, engine=engine, ray_address=ray_address, left_out=left_out, quiet=quiet)
    left_out = left_out or []
    if not results:
        raise BadInput(f"{len(paths)} traces", "none could be read: " + "; ".join(left_out))
    found, warned = [], []
    for r in results:
        if r.per_rank_report:  # staged: renamed into place when the run's outputs are
            final = Path(per_rank_dir) / per_rank_name(r.path)
            _ACTIVE[-1].add(r.per_rank_report, final)
            r.per_rank_report = str(final)
        dist, why = checked_rank(r.dist_rank, r.world_size)
        if why:
            warned.append(f"{r.path}: warning: {why}")
        if dist is not None:
            found.append((r.path, dist, "distributedInfo"))
        elif rank_from_name(r.path) is not None:
            found.append((r.path, rank_from_name(r.path), "file name"))
        else:
            found.append((r.path, None, ""))
    by_path = {r.path: r for r in results}
    ranked = [(rank, src, by_path[p]) for p, rank, src in assign_ranks(found)]
    spec = _spec(analyze_kw.get("arch"), ranked, analyze_kw.get("basis") or "peak")
    link = _link(spec)
    sheets = merged_sheets(ranked, link[:2] if link else None)
    src_count = Counter(src for _, src, _ in ranked)
    shas = {f"input SHA-256 (rank {rank})": r.sha256 for rank, _, r in sorted(ranked, key=lambda x: x[0])}
    prov = provenance(analyze_kw.get("command"), None, **shas)
    notes = [f"{len(ranked)} traces; rank from " + ", ".join(f"{s}: {n}" for s, n in sorted(src_count.items()))]
    notes += provenance_lines(prov)
    ws = {r.world_size for _, _, r in ranked if r.world_size is not None}
    if ws and ws != {len(ranked)}:
        notes.append(
            f"world size in distributedInfo is {', '.join(map(str, sorted(ws)))}, {len(ranked)} traces were given"
        )
    specs = sorted({r.spec_key or "none" for _, _, r in ranked})
    notes.append(f"GPU spec per rank: {', '.join(specs)}")
    mixed = mixed_gpus([(rank, r.devices) for rank, _, r in ranked])
    if mixed:
        warned.append(f"{len(ranked)} traces: warning: {mixed}")
    notes += warned
    notes += [f"left out: {x}" for x in left_out]
    if link:
        notes.append(f"interconnect ({link[2]}): {link[1]}")
    coverage = RankCoverage.from_results(ranked)
    if coverage is not None:
        notes += coverage.lines()  # the one coverage statement: total, then per rank
    by_rank = sorted(ranked, key=lambda x: x[0])
    for rank, _, r in by_rank:
        notes.extend(f"rank {rank}: warning: {w}" for w in r.warnings)
    return MultiReport(
        source=f"{len(ranked)} ranks",
        sheets=sheets,
        notes=notes,
        arch_msg=f"GPU spec per rank: {', '.join(specs)}",
        has_gpu=any(r.has_gpu for _, _, r in ranked),
        coverage=coverage,
        rank_audits={rank: r.audit for rank, _, r in by_rank},
        rank_points={rank: r.points for rank, _, r in by_rank},
        rank_paths={rank: r.path for rank, _, r in by_rank},
        chart_spec=spec,
        left_out=left_out,
        provenance=prov,
    )


def _spec(arch, ranked, basis: str = "peak"):
    """The GPU spec of ``arch``, else of the lowest rank's detected spec; None if neither."""
    from perfreport.specs import GpuSpec, load_arch

    if isinstance(arch, GpuSpec):
        return arch
    key = arch or next((r.spec_key for _, _, r in sorted(ranked, key=lambda x: x[0]) if r.spec_key), None)
    return load_arch(str(key), basis=basis) if key is not None else None


def _link(spec):
    """(per-direction GB/s, description, spec key) of the GPU-to-GPU link of ``spec``."""
    if spec is None:
        return None
    ic = spec.interconnect or {}
    bw = ic.get("link_per_direction_GBps")
    if not bw:
        return None
    return (
        float(bw),
        f"{ic.get('link', 'GPU link')} {bw:g} GB/s per direction ({spec.sources.get('interconnect', 'spec file')})",
        spec.key,
    )


def __getattr__(name):
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'perfreport.multi' has no attribute {name!r}")


__all__ = ["analyze_ranks", "expand_inputs", "ENGINES", "cores"]
