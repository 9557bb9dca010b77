"""``perfreport bench-pa``: paged-attention decode kernels, checked, timed, set beside the roofline.

``register(app)`` adds the command to a typer app. Exit codes: 0 ok; 1 a backend failed its
correctness check (or crashed); 2 bad arguments (one line on stderr, no traceback).
Tables go to stderr (rich); ``--json`` writes the rows to stdout; ``--csv FILE`` is written
atomically (temp file, then rename).

Defaults reproduce the seed's table on a GPU (batch 32, query length 4, 16:1 GQA, Dk 192,
Dv 128 and 192, page 64, contexts 16K and 64K, BF16 and FP8). Without a GPU the defaults shrink
to a smoke run (contexts 300 and 1K, batch 2, torch backend) and times are CPU times.
"""
from __future__ import annotations

import csv
import json
import os
import sys
import tempfile
from typing import Optional

import typer

from perfreport.bench import sizes

COLUMNS = ["context", "batch", "q_len", "q_heads", "kv_heads", "head_dim", "v_head_dim", "page",
           "kv_dtype", "layout", "backend", "partitions", "median_us", "p10_us", "p90_us", "bytes",
           "tb_s", "roofline_us", "pct_roofline", "max_err", "speedup", "clock", "status", "note",
           "trace_us", "trace_pct_roofline", "trace_wall_us"]
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


def build_cases(context, batch, query_len, q_heads, kv_heads, head_dim, v_head_dim, page_size,
                kv_dtype, layout):
    from itertools import product

    from perfreport.bench.pa_model import PACase
    try:
        ctxs = sizes.parse_size_list(context, "--context")
        bs = sizes.parse_int_list(batch, "--batch")
        qls = sizes.parse_int_list(query_len, "--query-len")
        hqs = sizes.parse_int_list(q_heads, "--q-heads")
        hkvs = sizes.parse_int_list(kv_heads, "--kv-heads")
        dks = sizes.parse_int_list(head_dim, "--head-dim", minimum=16, multiple_of=16)
        dvs = sizes.parse_int_list(v_head_dim, "--v-head-dim", minimum=16, multiple_of=16)
        pages = sizes.parse_int_list(page_size, "--page-size", minimum=16)
        kvs = sizes.parse_choice_list(kv_dtype, "--kv-dtype", {"bf16": "bf16", "bfloat16": "bf16",
                                                                "fp8": "fp8", "fp8_e4m3": "fp8"})
        lays = sizes.parse_choice_list(layout, "--layout", {"nhd": "NHD", "5d": "5D"})
    except ValueError as exc:
        raise BadArgs(str(exc)) from None
    for p in pages:
        if p & (p - 1) or p > 256:
            raise BadArgs(f"--page-size: {p} is not a power of two in [16, 256]")
    cases = []
    for ctx, b, q, hq, hkv, dk, dv, pg, kv, lay in product(ctxs, bs, qls, hqs, hkvs, dks, dvs, pages, kvs, lays):
        if hq % hkv:
            raise BadArgs(f"--q-heads {hq} is not divisible by --kv-heads {hkv}")
        cases.append(PACase(context=ctx, batch=b, q_len=q, q_heads=hq, kv_heads=hkv, head_dim=dk,
                            v_head_dim=dv, page=pg, kv_dtype=kv, layout=lay))
    return cases


def _fmt(v, nd=1):
    if v is None or v == "":
        return ""
    if isinstance(v, float):
        return f"{v:,.{nd}f}"
    return str(v)


def _ctx(n: int) -> str:
    for unit, m in (("M", 1024 ** 2), ("K", 1024)):
        if n % m == 0:
            return f"{n // m}{unit}"
    return str(n)


def print_table(res, console) -> None:
    from rich.table import Table
    cpu = res.clock == "cpu" or res.device == "cpu"
    title = (f"paged-attention decode on {res.device}"
             + (f", roofline: {res.arch}" if res.arch else "") + (" — CPU TIMES" if cpu else ""))
    t = Table(title=title)
    heads = ["context", "batch", "q", "heads", "dims", "page", "KV", "layout", "backend", "parts",
             "median µs", "p10", "p90", "MB moved", "TB/s", "roofline µs", "% roofline", "max err",
             "speedup", "status"]
    for h in heads:
        t.add_column(h, justify="left" if h in ("KV", "layout", "backend", "status") else "right")
    for r in res.rows:
        t.add_row(_ctx(r["context"]), str(r["batch"]), str(r["q_len"]), f"{r['q_heads']}:{r['kv_heads']}",
                  f"{r['head_dim']}/{r['v_head_dim']}", str(r["page"]), r["kv_dtype"], r["layout"],
                  r["backend"], str(r["partitions"]), _fmt(r["median_us"]), _fmt(r["p10_us"]),
                  _fmt(r["p90_us"]), _fmt(r["bytes"] / 1e6 if r["bytes"] else None),
                  _fmt(r["tb_s"], 3), _fmt(r["roofline_us"]), _fmt(r["pct_roofline"]),
                  _fmt(r["max_err"], 4) if r["max_err"] is not None else "",
                  _fmt(r["speedup"], 2), r["status"] + (f" ({r['note']})" if r["note"] else ""))
    console.print(t)
    for n in res.notes:
        console.print(f"note: {n}", highlight=False)


def write_csv(path: str, rows: list[dict]) -> None:
    d = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".bench-pa-", suffix=".csv", dir=d)
    try:
        with os.fdopen(fd, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=COLUMNS, extrasaction="ignore")
            w.writeheader()
            for r in rows:
                w.writerow({k: ("" if r.get(k) is None else r.get(k)) for k in COLUMNS})
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def _bad(msg: str):
    sys.stderr.write(f"perfreport bench-pa: {msg}\n")
    raise typer.Exit(2)


def register(app: typer.Typer) -> None:
    """Add the ``bench-pa`` command to ``app``."""

    @app.command("bench-pa")
    def bench_pa(
        context: Optional[str] = typer.Option(None, "--context", help="Context lengths, e.g. 16k,64k [GPU: 16k,64k; CPU: 300,1k]"),
        batch: Optional[str] = typer.Option(None, "--batch", help="Sequences per step [GPU: 32; CPU: 2]"),
        query_len: str = typer.Option("4", "--query-len", help="New query tokens per sequence"),
        q_heads: str = typer.Option("16", "--q-heads", help="Query heads"),
        kv_heads: str = typer.Option("1", "--kv-heads", help="KV heads"),
        head_dim: str = typer.Option("192", "--head-dim", help="Q/K head dim"),
        v_head_dim: str = typer.Option("128,192", "--v-head-dim", help="V/output head dim"),
        page_size: str = typer.Option("64", "--page-size", help="Tokens per KV page (16, 64, ...)"),
        kv_dtype: str = typer.Option("bf16,fp8", "--kv-dtype", help="KV cache dtype: bf16, fp8"),
        layout: str = typer.Option("nhd", "--layout", help="KV layout: nhd or 5d (list allowed)"),
        backend: Optional[str] = typer.Option(None, "--backend", help="triton,torch,aiter,flydsl,vllm,flashinfer [GPU: all; CPU: torch]"),
        baseline: str = typer.Option("torch", "--baseline", help="Backend the speedup is relative to"),
        partitions: str = typer.Option("auto", "--partitions", help="Split-K partitions of the triton kernel: auto or N"),
        graph: bool = typer.Option(False, "--graph/--no-graph", help="Time CUDA/HIP graph replays of the launch"),
        reps: Optional[int] = typer.Option(None, "--reps", help="Timed reps [GPU: 100; CPU: 10]"),
        arch: Optional[str] = typer.Option(None, "--arch", help="GPU spec for the roofline [default: detected from the device]"),
        csv_path: Optional[str] = typer.Option(None, "--csv", help="Write the rows to this CSV file"),
        json_out: bool = typer.Option(False, "--json", help="Write the rows as JSON to stdout"),
        trace: Optional[str] = typer.Option(None, "--trace", help="Write a torch.profiler trace of one launch per case"),
        quiet: bool = typer.Option(False, "--quiet", "-q", help="No table or progress on stderr"),
        seed: int = typer.Option(0, "--seed", help="Random seed of the inputs"),
    ):
        """Paged-attention decode: correctness vs the torch reference, cold-cache timing, roofline."""
        from rich.console import Console

        from perfreport.bench.backends import NAMES
        from perfreport.errors import BadInput

        gpu = _has_gpu()
        d = GPU_DEFAULTS if gpu else CPU_DEFAULTS
        try:
            cases = build_cases(context or d["context"], batch or d["batch"], query_len, q_heads, kv_heads,
                                head_dim, v_head_dim, page_size, kv_dtype, layout)
            names = sizes.parse_choice_list(backend or d["backend"], "--backend", {n: n for n in NAMES})
            base = sizes.parse_choice_list(baseline, "--baseline", {n: n for n in NAMES})
            parts = sizes.parse_partitions(partitions)
        except (BadArgs, ValueError) as exc:
            _bad(str(exc))
        if len(base) != 1:
            _bad("--baseline takes one backend")
        if reps is not None and reps < 1:
            _bad(f"--reps must be >= 1, got {reps}")
        if arch:
            from perfreport.specs import load_arch
            try:
                load_arch(arch)
            except BadInput as exc:
                _bad(str(exc))
        err = Console(stderr=True, width=None if sys.stderr.isatty() else 240)
        log = (lambda s: None) if quiet else (lambda s: err.print(s, highlight=False))
        if not gpu and not quiet:
            log("no GPU found: running on the CPU (small default shapes; times are CPU times)")
        from perfreport.bench.pa_run import BenchOptions, run_bench
        opts = BenchOptions(cases=cases, backends=names, baseline=base[0], partitions=parts,
                            graph=graph, reps=reps, arch=arch, trace=trace, seed=seed)
        try:
            if quiet or not sys.stderr.isatty():
                res = run_bench(opts, log)
            else:
                from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn
                with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                              console=err, transient=True) as prog:
                    task = prog.add_task("bench-pa", total=len(cases) * max(1, len(names)))

                    def step(done, total, label):
                        prog.update(task, completed=done, total=total, description=label)

                    res = run_bench(opts, log, on_step=step)
        except BadInput as exc:
            _bad(str(exc))
        except (ValueError, MemoryError, RuntimeError) as exc:
            sys.stderr.write(f"perfreport bench-pa: {type(exc).__name__}: {str(exc).splitlines()[0]}\n")
            raise typer.Exit(1)
        if not quiet:
            print_table(res, err)
        if csv_path:
            write_csv(csv_path, res.rows)
        if json_out:
            doc = {"device": res.device, "arch": res.arch, "clock": res.clock, "notes": res.notes,
                   "skipped": res.skipped, "failed": res.failed,
                   "rows": [{k: r.get(k) for k in COLUMNS} for r in res.rows]}
            sys.stdout.write(json.dumps(doc, indent=1) + "\n")
        for f in res.failed:
            sys.stderr.write(f"perfreport bench-pa: FAILED {f}\n")
        raise typer.Exit(1 if res.failed else 0)


__all__ = ["COLUMNS", "build_cases", "print_table", "register", "write_csv"]
