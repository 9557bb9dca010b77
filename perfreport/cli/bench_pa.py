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

from __future__ import annotations

import json
import sys
from typing import Optional

import typer

from perfreport.pa.bench import sizes

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
GPU_DEFAULTS = dict(context="16k,64k", batch="32", backend="triton,torch,aiter,flydsl,vllm,flashinfer")
CPU_DEFAULTS = dict(context="300,1k", batch="2", backend="torch")


class BadArgs(Exception):
    pass


def _has_gpu() -> bool:
    try:
        import torch
    except ImportError:
        return False
    return torch.cuda.is_available()


def build_cases(context, batch, query_len, q_heads, kv_heads, head_dim, v_head_dim, page_size, kv_dtype, layout):
    from itertools import product

    from perfreport.pa.bench.case import PACase

    try:
        ctxs = sizes.parse_size_list(context, "--context")
        bs = sizes.parse_int_list(batch, "--batch")
        qls = sizes.parse_int_list(query_len, "--query-len")
        hqs = sizes.parse_int_list(q_heads, "--q-heads")
        hkvs = sizes.parse_int_list(kv_heads, "--kv-heads")
        dks = sizes.parse_int_list(head_dim, "--head-dim", minimum=16, multiple_of=16)
        dvs = sizes.parse_int_list(v_head_dim, "--v-head-dim", minimum=16, multiple_of=16)
        pages = sizes.parse_int_list(page_size, "--page-size", minimum=16)
        kvs = sizes.parse_choice_list(
            kv_dtype, "--kv-dtype", {"bf16": "bf16", "bfloat16": "bf16", "fp8": "fp8", "fp8_e4m3": "fp8"}
        )
        lays = sizes.parse_choice_list(layout, "--layout", {"nhd": "NHD", "5d": "5D", "5dv": "5DV"})
    except ValueError as exc:
        raise BadArgs(str(exc)) from None
    for p in pages:
        if p & (p - 1) or p > 256:
            raise BadArgs(f"--page-size: {p} is not a power of two in [16, 256]")
    cases = []
    for ctx, b, q, hq, hkv, dk, dv, pg, kv, lay in product(ctxs, bs, qls, hqs, hkvs, dks, dvs, pages, kvs, lays):
        if hq % hkv:
            raise BadArgs(f"--q-heads {hq} is not divisible by --kv-heads {hkv}")
        if q > ctx:
            raise BadArgs(f"--query-len {q} exceeds --context {ctx} (the context includes the new tokens)")
        cases.append(
            PACase(
                context=ctx,
                batch=b,
                q_len=q,
                q_heads=hq,
                kv_heads=hkv,
                head_dim=dk,
                v_head_dim=dv,
                page=pg,
                kv_dtype=kv,
                layout=lay,
            )
        )
    return cases


def print_table(res, console) -> None:
    from perfreport.pa.bench.table import print_table as _print

    _print(res, console)


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


def check_targets(csv_path, trace, arch) -> None:
    """--csv, its ``.partial`` file and --trace usable, none an input and no two the same file:
    BadInput with one line otherwise (the output plan, :mod:`perfreport.writers.plan`)."""
    from perfreport.pa.bench.csv_rows import partial_path
    from perfreport.writers.plan import OutputPlan
    from perfreport.writers.targets import input_files

    plan = OutputPlan(input_files("-", arch=arch)).file(csv_path, "--csv")
    plan.file(partial_path(csv_path) if csv_path else None, "--csv's rows-so-far file")
    plan.file(trace, "--trace").check()


def check_baseline(baseline: str, gpu: bool, graph: bool) -> None:
    """Refuse, before anything runs, a baseline whose package is missing (every speedup would
    be empty) and ``--graph`` without a GPU (there is no graph to replay on the CPU)."""
    import importlib.util

    if graph and not gpu:
        raise BadArgs("--graph: CUDA/HIP graphs need a GPU, and none was found")
    try:
        found = importlib.util.find_spec(baseline) is not None
    except (ImportError, ValueError):
        found = False
    if not found:
        raise BadArgs(
            f"--baseline {baseline}: the {baseline!r} package is not installed, so no speedup could be "
            "computed; install it or choose a baseline that runs here (torch)"
        )


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


def check_memory(cases, names, partitions, on_gpu: bool) -> None:
    from perfreport.pa.bench.memory import available_bytes, case_bytes, gib

    avail, what = available_bytes(on_gpu)
    if avail is None:
        return
    for c in cases:
        need = case_bytes(c, names, partitions)
        if need > avail:
            raise BadArgs(
                f"context {c.context} batch {c.batch} q_len {c.q_len} {c.kv_dtype} needs about "
                f"{gib(need)}, more than the {gib(avail)} {what}"
            )


def _bad(msg: str):
    sys.stderr.write(f"perfreport bench-pa: {msg}\n")
    raise typer.Exit(2)


def register(app: typer.Typer) -> None:
    """Add the ``bench-pa`` command to ``app``."""

    @app.command("bench-pa")
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
        partitions: str = typer.Option(
            "auto", "--partitions", help="Split-K partitions of the triton kernel: auto or N"
        ),
        graph: bool = typer.Option(False, "--graph/--no-graph", help="Time CUDA/HIP graph replays of the launch"),
        reps: Optional[int] = typer.Option(None, "--reps", help="Timed reps [GPU: 100; CPU: 10]"),
        arch: Optional[str] = typer.Option(
            None, "--arch", help="GPU spec for the roofline [default: detected from the device]"
        ),
        csv_path: Optional[str] = typer.Option(None, "--csv", help="Write the rows to this CSV file"),
        json_out: bool = typer.Option(False, "--json", help="Write the rows as JSON to stdout"),
        trace: Optional[str] = typer.Option(
            None, "--trace", help="Write a torch.profiler trace of one launch per case"
        ),
        quiet: bool = typer.Option(False, "--quiet", "-q", help="No table or progress on stderr"),
        seed: int = typer.Option(0, "--seed", help="Random seed of the inputs"),
        fp8_mma: str = typer.Option(
            "f16", "--fp8-mma", help="Our kernel's FP8 path: f16 (dequantize) or fp8 (FP8 MMAs)"
        ),
        partials: str = typer.Option("fp32", "--partials", help="Our kernel's split-K partials: fp32 or bf16"),
    ):
        """Paged-attention decode: correctness vs the torch reference, cold-cache timing, roofline."""
        from rich.console import Console

        from perfreport.pa.bench.backends import NAMES
        from perfreport.errors import BadInput

        gpu = _has_gpu()
        d = GPU_DEFAULTS if gpu else CPU_DEFAULTS
        try:
            cases = build_cases(
                context or d["context"],
                batch or d["batch"],
                query_len,
                q_heads,
                kv_heads,
                head_dim,
                v_head_dim,
                page_size,
                kv_dtype,
                layout,
            )
            names = sizes.parse_choice_list(backend or d["backend"], "--backend", {n: n for n in NAMES})
            base = sizes.parse_choice_list(baseline, "--baseline", {n: n for n in NAMES})
            parts = sizes.parse_partitions(partitions)
            sizes.check_seed(seed)
            mma = sizes.parse_choice_list(fp8_mma, "--fp8-mma", {"f16": "f16", "fp8": "fp8"})
            part_dt = sizes.parse_choice_list(partials, "--partials", {"fp32": "fp32", "bf16": "bf16"})
            if len(mma) != 1 or len(part_dt) != 1:
                raise BadArgs("--fp8-mma and --partials take one value each")
            check_memory(cases, names, parts, gpu)
        except (BadArgs, ValueError) as exc:
            _bad(str(exc))
        if len(base) != 1:
            _bad("--baseline takes one backend")
        try:
            check_baseline(base[0], gpu, graph)
        except BadArgs as exc:
            _bad(str(exc))
        if reps is not None and not 1 <= reps <= 100_000:
            _bad(f"--reps must be in [1, 100000], got {reps}")
        try:
            if arch:
                from perfreport.specs import load_arch

                load_arch(arch)
            check_targets(csv_path, trace, arch)
        except BadInput as exc:
            _bad(str(exc))
        err = Console(stderr=True, width=None if sys.stderr.isatty() else 120)
        log = (lambda s: None) if quiet else (lambda s: err.print(s, highlight=False))
        if not gpu and not quiet:
            log("no GPU found: running on the CPU (small default shapes; times are CPU times)")
        from perfreport.pa.bench.run import BenchOptions, run_bench

        writer = None
        if csv_path:
            from perfreport.pa.bench.csv_rows import RowWriter

            try:
                writer = RowWriter(csv_path, COLUMNS)
            except OSError as exc:
                _bad(f"{csv_path}: cannot write: {exc.strerror}")

        def on_rows(rows):
            for r in rows:
                writer.write(r)

        opts = BenchOptions(
            cases=cases,
            backends=names,
            baseline=base[0],
            partitions=parts,
            graph=graph,
            reps=reps,
            arch=arch,
            trace=trace,
            seed=seed,
            fp8_mma=mma[0],
            partials=part_dt[0],
            on_rows=on_rows if writer else None,
        )
        done = False
        try:
            if quiet or not sys.stderr.isatty():
                res = run_bench(opts, log)
            else:
                from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

                with Progress(
                    TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), console=err, transient=True
                ) as prog:
                    task = prog.add_task("bench-pa", total=len(cases) * max(1, len(names)))

                    def step(done, total, label):
                        prog.update(task, completed=done, total=total, description=label)

                    res = run_bench(opts, log, on_step=step)
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
            missing = baseline_missing(res, base[0]) if done and not res.failed else None
            if writer is not None:
                writer.close(done and missing is None)
                if not done:
                    sys.stderr.write(f"perfreport bench-pa: rows measured so far kept in {writer.tmp}\n")
                elif missing:
                    writer.discard()
        if missing:
            _bad(missing)
        if not quiet:
            print_table(res, err)
        if json_out:
            doc = {
                "device": res.device,
                "arch": res.arch,
                "clock": res.clock,
                "notes": res.notes,
                "skipped": res.skipped,
                "failed": res.failed,
                "rows": [{k: r.get(k) for k in COLUMNS} for r in res.rows],
            }
            sys.stdout.write(json.dumps(doc, indent=1) + "\n")
        for f in res.failed:
            sys.stderr.write(f"perfreport bench-pa: FAILED {f}\n")
        raise typer.Exit(1 if res.failed else 0)


__all__ = [
    "COLUMNS",
    "baseline_missing",
    "build_cases",
    "check_baseline",
    "check_memory",
    "check_targets",
    "print_table",
    "register",
    "write_csv",
]
