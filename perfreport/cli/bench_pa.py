"""``perfreport bench-pa``: paged-attention decode kernels, checked, timed, set beside the roofline.

``register(app)`` adds the command to a typer app. Exit codes: 0 ok; 1 a backend failed its
correctness check (or crashed); 2 bad arguments (one line on stderr, no traceback).
Tables go to stderr (rich, fits 120 columns: :mod:`perfreport.pa.bench.table`); ``--json``
writes the rows to stdout; ``--csv FILE`` is written row by row (each case's rows as soon as they
are measured, into ``.FILE.partial``, renamed to FILE at the end: :mod:`perfreport.pa.bench.csv_rows`).
Checked before anything is allocated (exit 2, one line): every flag's values, ``--csv`` and
``--trace`` targets (missing, read-only or non-directory parent, an existing directory, a
non-regular file), and the memory each case needs (:mod:`perfreport.pa.bench.memory`) against the
free device memory (or the host's available RAM on the CPU).

Defaults reproduce the seed's table on a GPU (batch 32, query length 4, 16:1 GQA, Dk 192,
Dv 128 and 192, page 64, contexts 16K and 64K, BF16 and FP8). Without a GPU the defaults shrink
to a smoke run (contexts 300 and 1K, batch 2, torch backend) and times are CPU times.
"""

# annotations stay objects (no `from __future__ import annotations`): typer reads this signature
# at every start, and evaluating ~300 annotation strings cost it ~8 ms

import functools
import json
import sys
from types import SimpleNamespace
from typing import Optional

import typer

from perfreport.cli.bench_pa_args import bad as _bad
from perfreport.cli.bench_pa_args import has_gpu, parse_options

COLUMNS = [
    "context",
    "batch",
    "q_len",
    "q_heads",
    "kv_heads",
    "head_dim",
    "v_head_dim",
    "page",
    "kv_dtype",
    "layout",
    "backend",
    "partitions",
    "median_us",
    "p10_us",
    "p90_us",
    "bytes",
    "tb_s",
    "roofline_us",
    "pct_roofline",
    "max_err",
    "speedup",
    "clock",
    "status",
    "note",
    "trace_us",
    "trace_pct_roofline",
    "trace_wall_us",
    "spread",
    "impl_bytes",
    "impl_roofline_us",
    "rel_l2",
    "rel_max",
]


def fit_bench_table(res, width: int):
    """bench-pa's table laid out for ``width`` columns like every console view
    (:func:`perfreport.writers.fit_table.fit`): the shape is never cut; the speedup, impl,
    p90/p10 and P columns are dropped first, in that order, when it does not fit."""
    from perfreport.pa.bench.table import TEXT_HEADS, layout
    from perfreport.writers.fit_table import Col, fit

    title, heads, rows = layout(res)
    drop = {"speedup": 5, "impl": 4, "p90/p10": 3, "P": 2, "rel err": 1}
    cols = [Col(h, num=h not in TEXT_HEADS, drop=drop.get(h, 0)) for h in heads]
    return fit(rows, cols, width, title=title)


def print_table(res, console) -> None:
    """The table (fitted to the console), then one line per note."""
    from perfreport.pa.bench.table import notes_of

    console.print(fit_bench_table(res, console.width))
    for line in notes_of(res):
        console.print(line, highlight=False, soft_wrap=True, markup=False)


def write_csv(path: str, rows: list[dict]) -> None:
    """All rows at once (row by row through :class:`perfreport.pa.bench.csv_rows.RowWriter`)."""
    from perfreport.pa.bench.csv_rows import RowWriter

    w = RowWriter(path, COLUMNS)
    ok = False
    try:
        for r in rows:
            w.write(r)
        ok = True
    finally:
        w.close(ok)


def baseline_missing(res, baseline: str) -> str | None:
    """Why the baseline has no measured row (so the speedups are empty), or None."""
    if any(r.get("backend") == baseline and r.get("median_us") for r in res.rows):
        return None
    why = next((s for s in res.skipped if s.startswith(f"{baseline}:")), None)
    if why is None:
        why = next(
            (f"{baseline}: {r.get('note')}" for r in res.rows if r.get("backend") == baseline and r.get("note")), ""
        )
    return f"--baseline {baseline} was not measured ({why or 'no row'}); the speedups are empty"


def _open_writer(csv_path: str | None):
    """The CSV row writer (rows land as they are measured), or None without --csv."""
    if not csv_path:
        return None
    from perfreport.pa.bench.csv_rows import RowWriter

    try:
        return RowWriter(csv_path, COLUMNS)
    except OSError as exc:
        _bad(f"{csv_path}: cannot write: {exc.strerror}")


def _run_with_progress(opts, log, err, quiet: bool):
    """run_bench with a progress bar on a terminal, quiet in a pipe or under -q."""
    from perfreport.pa.bench.run import run_bench

    if quiet or not sys.stderr.isatty():
        return run_bench(opts, log)
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    with Progress(
        TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), console=err, transient=True
    ) as prog:
        task = prog.add_task("bench-pa", total=len(opts.cases) * max(1, len(opts.backends)))
        return run_bench(
            opts,
            log,
            on_step=lambda done, total, label: prog.update(task, completed=done, total=total, description=label),
        )


def _run(opts, log, err, quiet: bool, writer, baseline: str):
    """Run the cases; one line and exit 1 on a crash, 130 on ^C; the CSV is committed only when
    every case ran and the baseline was measured (else kept aside or discarded, as said)."""
    from perfreport.errors import BadInput

    done, res, missing = False, None, None
    try:
        res = _run_with_progress(opts, log, err, quiet)
        done = True
    except BadInput as exc:
        _bad(str(exc))
    except KeyboardInterrupt:
        sys.stderr.write("perfreport bench-pa: interrupted\n")
        raise typer.Exit(130)
    except Exception as exc:  # one line, no traceback: a crash of our own backends is exit 1
        first = str(exc).splitlines()[0] if str(exc) else ""
        sys.stderr.write(f"perfreport bench-pa: {type(exc).__name__}: {first}\n")
        raise typer.Exit(1)
    finally:
        missing = baseline_missing(res, baseline) if done and not res.failed else None
        if writer is not None:
            writer.close(done and missing is None)
            if not done:
                sys.stderr.write(f"perfreport bench-pa: rows measured so far kept in {writer.tmp}\n")
            elif missing:
                writer.discard()
    if missing:
        _bad(missing)
    return res


def json_doc(res) -> dict:
    """The --json document: device, arch, clock, notes, skipped/failed cases, and the rows."""
    return {
        "device": res.device,
        "arch": res.arch,
        "clock": res.clock,
        "notes": res.notes,
        "skipped": res.skipped,
        "failed": res.failed,
        "rows": [{k: r.get(k) for k in COLUMNS} for r in res.rows],
    }


def bench_pa(
    context: Optional[str] = typer.Option(
        None, "--context", help="Context lengths, e.g. 16k,64k [GPU: 16k,64k; CPU: 300,1k]"
    ),
    batch: Optional[str] = typer.Option(None, "--batch", help="Sequences per step [GPU: 32; CPU: 2]"),
    query_len: str = typer.Option("4", "--query-len", help="New query tokens per sequence"),
    q_heads: str = typer.Option("16", "--q-heads", help="Query heads"),
    kv_heads: str = typer.Option("1", "--kv-heads", help="KV heads"),
    head_dim: str = typer.Option("192", "--head-dim", help="Q/K head dim"),
    v_head_dim: str = typer.Option("128,192", "--v-head-dim", help="V/output head dim"),
    page_size: str = typer.Option("64", "--page-size", help="Tokens per KV page (16, 64, ...)"),
    kv_dtype: str = typer.Option("bf16,fp8", "--kv-dtype", help="KV cache dtype: bf16, fp8"),
    layout: str = typer.Option(
        "nhd", "--layout", help="KV layout: nhd, 5d, or 5dv (5D with vectorized 5D V); list allowed"
    ),
    backend: Optional[str] = typer.Option(
        None, "--backend", help="triton,torch,aiter,flydsl,vllm,flashinfer [GPU: all; CPU: torch]"
    ),
    baseline: str = typer.Option("torch", "--baseline", help="Backend the speedup is relative to"),
    partitions: str = typer.Option("auto", "--partitions", help="Split-K partitions of the triton kernel: auto or N"),
    graph: bool = typer.Option(False, "--graph/--no-graph", help="Time CUDA/HIP graph replays of the launch"),
    reps: Optional[int] = typer.Option(None, "--reps", help="Timed reps [GPU: 100; CPU: 10]"),
    arch: Optional[str] = typer.Option(
        None, "--arch", help="GPU spec for the roofline [default: detected from the device]"
    ),
    csv_path: Optional[str] = typer.Option(None, "--csv", help="Write the rows to this CSV file"),
    json_out: bool = typer.Option(False, "--json", help="Write the rows as JSON to stdout"),
    trace: Optional[str] = typer.Option(None, "--trace", help="Write a torch.profiler trace of one launch per case"),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No table or progress on stderr"),
    seed: int = typer.Option(0, "--seed", help="Random seed of the inputs"),
    fp8_mma: str = typer.Option("f16", "--fp8-mma", help="Our kernel's FP8 path: f16 (dequantize) or fp8 (FP8 MMAs)"),
    partials: str = typer.Option("fp32", "--partials", help="Our kernel's split-K partials: fp32 or bf16"),
):
    """Paged-attention decode: correctness vs the torch reference, cold-cache timing, roofline."""
    params = dict(locals())  # the options by name, before any other local exists
    from rich.console import Console

    from perfreport.pa.bench.run import BenchOptions

    gpu = functools.cache(has_gpu)  # probed once, and only when a check or a default needs it
    cases, names, base, parts, mma, part_dt = parse_options(gpu, SimpleNamespace(**params))
    gpu = gpu()
    err = Console(stderr=True, width=None if sys.stderr.isatty() else 120)
    log = (lambda s: None) if quiet else (lambda s: err.print(s, highlight=False))
    if not gpu and not quiet:
        shapes = "the shapes given" if context is not None or batch is not None else "small default shapes"
        log(f"no GPU found: running on the CPU ({shapes}; times are CPU times)")
    writer = _open_writer(csv_path)
    opts = BenchOptions(
        cases=cases,
        backends=names,
        baseline=base,
        partitions=parts,
        graph=graph,
        reps=reps,
        arch=arch,
        trace=trace,
        seed=seed,
        fp8_mma=mma,
        partials=part_dt,
        on_rows=(lambda rows: [writer.write(r) for r in rows]) if writer else None,
    )
    res = _run(opts, log, err, quiet, writer, base)
    if not quiet:
        print_table(res, err)
    if json_out:
        sys.stdout.write(json.dumps(json_doc(res), indent=1) + "\n")
    for f in res.failed:
        sys.stderr.write(f"perfreport bench-pa: FAILED {f}\n")
    raise typer.Exit(1 if res.failed else 0)


def register(app: typer.Typer) -> None:
    """Add the ``bench-pa`` command to ``app``."""
    app.command("bench-pa")(bench_pa)


__all__ = [
    "COLUMNS",
    "bench_pa",
    "json_doc",
    "baseline_missing",
    "print_table",
    "register",
    "write_csv",
]
