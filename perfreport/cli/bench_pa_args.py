"""Options of ``perfreport bench-pa``, checked before anything is allocated: the case grid,
backend and baseline choices, ``--csv`` / ``--trace`` targets, the memory each case needs.
A bad value exits 2 with one line on stderr (no traceback)."""

from __future__ import annotations

import sys

import typer

from perfreport.pa.bench import sizes

GPU_DEFAULTS = dict(context="16k,64k", batch="32", backend="triton,torch,aiter,flydsl,vllm,flashinfer")
CPU_DEFAULTS = dict(context="300,1k", batch="2", backend="torch")


class BadArgs(Exception):
    pass


def has_gpu() -> bool:
    try:
        import torch
    except ImportError:
        return False
    return torch.cuda.is_available()


def build_cases(context, batch, query_len, q_heads, kv_heads, head_dim, v_head_dim, page_size, kv_dtype, layout):
    """The cases, the product of the option lists; BadArgs naming the option otherwise.
    ``context`` and ``batch`` may be no-argument functions giving the default, called only once
    every given option's syntax is checked (the defaults depend on whether there is a GPU, and
    finding out imports torch: seconds, which a mistyped option should not cost)."""
    from itertools import product

    from perfreport.pa.bench.case import PACase

    try:
        ctxs = None if callable(context) else sizes.parse_size_list(context, "--context")
        bs = None if callable(batch) else sizes.parse_int_list(batch, "--batch")
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
        if ctxs is None:
            ctxs = sizes.parse_size_list(context(), "--context")
        if bs is None:
            bs = sizes.parse_int_list(batch(), "--batch")
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


def bad(msg: str):
    sys.stderr.write(f"perfreport bench-pa: {msg}\n")
    raise typer.Exit(2)


def parse_options(gpu: bool, o):
    """The options ``o`` (bench-pa's parameters by name) checked and parsed, before any work:
    (cases, backends, baseline, partitions, fp8 MMA path, partials dtype); a bad one exits 2 with
    one line. ``gpu`` is a bool or a no-argument probe (:func:`has_gpu`, cached), called only
    when a default or a check needs it: an option refused by its syntax never imports torch."""
    from perfreport.errors import BadInput
    from perfreport.pa.bench.backends import NAMES

    probe = gpu if callable(gpu) else (lambda: gpu)

    def default(key: str):
        return (GPU_DEFAULTS if probe() else CPU_DEFAULTS)[key]

    choices = {n: n for n in NAMES}
    try:
        names = sizes.parse_choice_list(o.backend, "--backend", choices) if o.backend else None
        base = sizes.parse_choice_list(o.baseline, "--baseline", choices)
        parts = sizes.parse_partitions(o.partitions)
        sizes.check_seed(o.seed)
        mma = sizes.parse_choice_list(o.fp8_mma, "--fp8-mma", {"f16": "f16", "fp8": "fp8"})
        part_dt = sizes.parse_choice_list(o.partials, "--partials", {"fp32": "fp32", "bf16": "bf16"})
        if len(mma) != 1 or len(part_dt) != 1:
            raise BadArgs("--fp8-mma and --partials take one value each")
        if len(base) != 1:
            raise BadArgs("--baseline takes one backend")
        if o.reps is not None and not 1 <= o.reps <= 100_000:
            raise BadArgs(f"--reps must be in [1, 100000], got {o.reps}")
        cases = build_cases(
            o.context or (lambda: default("context")),
            o.batch or (lambda: default("batch")),
            o.query_len,
            o.q_heads,
            o.kv_heads,
            o.head_dim,
            o.v_head_dim,
            o.page_size,
            o.kv_dtype,
            o.layout,
        )
        if o.arch:
            from perfreport.specs import load_arch

            load_arch(o.arch)
        check_targets(o.csv_path, o.trace, o.arch)  # the output files need no GPU probe either
        names = names or sizes.parse_choice_list(default("backend"), "--backend", choices)
        check_memory(cases, names, parts, probe())
        check_baseline(base[0], probe(), o.graph)
    except (BadArgs, BadInput, ValueError) as exc:
        bad(str(exc))
    return cases, names, base[0], parts, mma[0], part_dt[0]


__all__ = [
    "BadArgs",
    "CPU_DEFAULTS",
    "GPU_DEFAULTS",
    "bad",
    "build_cases",
    "check_baseline",
    "check_memory",
    "check_targets",
    "has_gpu",
    "parse_options",
]
