"""Runs the bench-pa grid: inputs, correctness against the reference, timing, roofline, trace.

Kept apart from the typer command (:mod:`perfreport.cli.bench_pa`) so it can be driven from
Python. torch is imported here, never at package import.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from typing import Callable

from perfreport.pa.bench.case import OP_NAME, PACase, roofline_for_case
from perfreport.pa.bench.check import check, path_of, poison

NOISY = 2.0  # p90 / p10 above this: the row is flagged noisy
OURS = ("triton", "torch")  # errors of our own backends fail the run; a vendor's become skipped rows


@dataclass
class BenchOptions:
    cases: list[PACase]
    backends: list[str]
    baseline: str = "torch"
    partitions: str | int = "auto"
    graph: bool = False
    reps: int | None = None
    arch: str | None = None
    trace: str | None = None
    seed: int = 0
    fp8_mma: str = "f16"
    partials: str = "fp32"
    on_rows: Callable[[list], None] | None = None  # called with each case's rows once measured


@dataclass
class BenchResult:
    rows: list[dict] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    device: str = ""
    arch: str = ""
    clock: str = ""
    notes: list[str] = field(default_factory=list)


def prepare_environment(backends: list[str]) -> bool:
    """True when a GPU is usable. Without one, make triton run through its interpreter: the
    variable must be set before triton is first imported."""
    import torch

    on_gpu = torch.cuda.is_available()
    if not on_gpu and "triton" in backends and "triton" not in sys.modules:
        os.environ["TRITON_INTERPRET"] = "1"
    return on_gpu


def _spec(arch: str | None, on_gpu: bool):
    from perfreport.specs import detect_arch_from_name, load_arch

    if arch:
        return load_arch(arch)  # BadInput -> exit 2 in the command
    if on_gpu:
        import torch

        return detect_arch_from_name(torch.cuda.get_device_name())
    return None


def _storage(inputs) -> str:
    import torch

    return {
        torch.bfloat16: "bf16",
        torch.float8_e4m3fn: "fp8",
        torch.float8_e4m3fnuz: "fp8_fnuz",
        torch.uint8: "uint8",
    }.get(inputs.key_cache.dtype, "bf16")


def _row(case: PACase, backend: str) -> dict:
    return {
        "context": case.context,
        "batch": case.batch,
        "q_len": case.q_len,
        "q_heads": case.q_heads,
        "kv_heads": case.kv_heads,
        "head_dim": case.head_dim,
        "v_head_dim": case.v_head_dim,
        "page": case.page,
        "kv_dtype": case.kv_dtype,
        "layout": case.layout,
        "backend": backend,
        "partitions": "",
        "median_us": None,
        "p10_us": None,
        "p90_us": None,
        "bytes": None,
        "tb_s": None,
        "roofline_us": None,
        "pct_roofline": None,
        "max_err": None,
        "rel_l2": None,
        "rel_max": None,
        "speedup": None,
        "clock": "",
        "status": "",
        "note": "",
        "spread": None,
        "impl_bytes": None,
        "impl_roofline_us": None,
    }


def run_bench(
    opts: BenchOptions,
    log: Callable[[str], None] = lambda s: None,
    on_step: Callable[[int, int, str], None] | None = None,
) -> BenchResult:
    """Run every (case, backend); ``on_step(done, total, label)`` after each (progress bars)."""
    import torch

    from perfreport.pa.bench import backends as B
    from perfreport.pa.bench.timing import llc_bytes
    from perfreport.pa.kernel.reference import paged_attention_ref

    on_gpu = prepare_environment(opts.backends)
    spec = _spec(opts.arch, on_gpu)
    res = BenchResult(
        device=torch.cuda.get_device_name() if on_gpu else "cpu", arch=spec.name if spec is not None else ""
    )
    reps = opts.reps or (100 if on_gpu else 10)
    flush = 2 * llc_bytes(None, spec) if on_gpu else 0
    if not on_gpu:
        res.notes.append("no GPU: times are CPU wall-clock times (perf_counter), not kernel times")
        if opts.graph:
            res.notes.append("--graph ignored without a GPU")
    if spec is None:
        res.notes.append("no GPU spec: roofline columns empty (use --arch)")
    names = list(opts.backends) + ([opts.baseline] if opts.baseline not in opts.backends else [])
    mods, skipped_once = {}, set()
    for name in names:
        mods[name] = B.load(name)
    dev = "cuda" if on_gpu else "cpu"
    to_trace = []
    total, done = len(opts.cases) * len(names), 0
    for case in opts.cases:
        inp = case.inputs(device=dev, seed=opts.seed)
        mcase = case.with_storage(_storage(inp))
        roof = roofline_for_case(mcase, spec)
        ref = paged_attention_ref(
            inp.query,
            inp.key_cache,
            inp.value_cache,
            inp.block_tables,
            inp.context_lens,
            fp8_dtype=inp.fp8_dtype,
            out_dtype=None,
            **inp.kwargs(),
        )
        case_rows = []
        for name in names:
            if on_step is not None:
                on_step(done, total, f"{_label(case)} {name}")
            done += 1
            row = _row(case, name)
            bopts = {
                "partitions": opts.partitions,
                "on_gpu": on_gpu,
                "fp8_mma": opts.fp8_mma,
                "partials": opts.partials,
            }
            try:
                prep = mods[name].prepare(inp, case, bopts)
            except B.SkipRow as exc:  # this case is outside what the backend supports
                row.update(status="skipped", note=str(exc))
                case_rows.append(row)
                continue
            except B.Skip as exc:  # the backend cannot run here at all (package, platform)
                key = (name, str(exc))
                if key not in skipped_once:
                    skipped_once.add(key)
                    res.skipped.append(f"{name}: skipped: {exc}")
                    log(f"{name}: skipped: {exc}")
                continue
            except Exception as exc:
                if name in OURS:
                    raise
                row.update(status="skipped", note=f"plan failed: {_why(exc)}")
                case_rows.append(row)
                continue
            row["partitions"], row["note"] = prep.partitions, prep.note
            try:
                if prep.out is not None:
                    poison(prep.out)  # a launch that writes nothing (or half) then fails the check
                out = prep.run()
                if on_gpu:
                    torch.cuda.synchronize()
                chk = check(out, ref, _path(name, case.kv_dtype, opts.fp8_mma))
            except Exception as exc:  # ours fail their check; a vendor's launch error skips its row
                if name in OURS:
                    row.update(status="error", note=_why(exc))
                    res.failed.append(f"{name} at {_label(case)}: {row['note']}")
                else:
                    row.update(status="skipped", note=f"launch failed: {_why(exc)}")
                case_rows.append(row)
                continue
            row.update(max_err=chk.max_err, rel_l2=chk.rel_l2, rel_max=chk.rel_max)
            if not chk.ok:  # NaN included
                row["status"] = "FAIL"
                row["note"] = (row["note"] + "; " if row["note"] else "") + chk.why
                res.failed.append(f"{name} at {_label(case)}: {chk.why}")
                case_rows.append(row)
                continue
            t = _timed(prep.run, reps, on_gpu, flush, opts.graph and on_gpu, row)
            res.clock = t.clock
            row.update(
                status="ok",
                median_us=t.median_us,
                p10_us=t.p10_us,
                p90_us=t.p90_us,
                clock=t.clock,
                bytes=roof["bytes"],
                roofline_us=roof["roofline_us"],
            )
            if t.p10_us > 0:
                row["spread"] = t.p90_us / t.p10_us
                if row["spread"] > NOISY:
                    row["status"] = "noisy"
                    row["note"] = (
                        row["note"] + "; " if row["note"] else ""
                    ) + f"p90/p10 = {row['spread']:.1f} > {NOISY:g}"
            if roof["bytes"]:
                row["tb_s"] = roof["bytes"] / (t.median_us * 1e-6) / 1e12
            if roof["roofline_us"]:
                row["pct_roofline"] = roof["roofline_us"] / t.median_us * 100.0
            elif roof["reason"] and not row["note"] and spec is not None:  # no spec: one note for all
                row["note"] = roof["reason"]
            if name == "triton":
                _add_impl(row, mcase, prep, opts, spec, roof, inp)
            case_rows.append(row)
            if opts.trace and name == names[0]:
                to_trace.append((mcase, inp, prep, row))
        base = next((r for r in case_rows if r["backend"] == opts.baseline and r["median_us"]), None)
        for r in case_rows:
            if base is not None and r["median_us"]:
                r["speedup"] = base["median_us"] / r["median_us"]
        res.rows.extend(case_rows)
        if opts.on_rows is not None:
            opts.on_rows(case_rows)
        del inp, ref
    if opts.trace:
        if to_trace:
            capture_trace(opts.trace, to_trace, on_gpu, flush)
            log(f"wrote trace {opts.trace} ({len(to_trace)} launch(es) of {names[0]})")
        else:
            res.notes.append(f"no trace written: {names[0]} produced no timed launch")
    return res


def _timed(run, reps: int, on_gpu: bool, flush: int, graph: bool, row: dict):
    """time_launch; with --graph, a launch that cannot be captured (a backend that syncs or
    allocates on the host) is timed without the graph, and its row says so, instead of ending
    the whole bench."""
    from perfreport.pa.bench.timing import time_launch

    if graph:
        try:
            return time_launch(run, reps, on_gpu=on_gpu, flush_bytes=flush, graph=True)
        except Exception as exc:
            import torch

            if torch.cuda.is_available():
                torch.cuda.synchronize()
            why = f"graph capture failed ({_why(exc)}): timed without --graph"
            row["note"] = (row["note"] + "; " if row["note"] else "") + why
    return time_launch(run, reps, on_gpu=on_gpu, flush_bytes=flush, graph=False)


def _path(backend: str, kv_dtype: str, fp8_mma: str) -> str:
    """Tolerance key for a backend's row: ours by the path it runs; the torch reference by its KV
    dtype (it dequantizes in fp32); a vendor's FP8 kernel may use FP8 MMAs: the FP8-MMA bound."""
    if backend == "triton":
        return path_of(kv_dtype, fp8_mma)
    if backend == "torch":
        return path_of(kv_dtype, "f16")
    return path_of(kv_dtype, "fp8")


def _why(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {str(exc).splitlines()[0][:120] if str(exc) else ''}".rstrip(": ")


def _add_impl(row: dict, case: PACase, prep, opts: BenchOptions, spec, roof: dict, inp) -> None:
    """As-implemented bytes of our kernel (partials included) and their roofline time."""
    from perfreport.pa.bench.kv_bytes import impl_bytes

    try:
        parts = int(prep.partitions)
    except (TypeError, ValueError):
        return
    t = impl_bytes(
        case,
        parts,
        partials=opts.partials,
        scale_mode=getattr(inp, "scale_mode", "tensor"),
        v_scale_mode=getattr(inp, "v_scale_mode", None),
    )
    row["impl_bytes"] = t["total"]
    if spec is not None and roof.get("compute_spec"):
        from perfreport.specs import roofline

        rt, _ = roofline(spec, roof["flops"], t["total"], roof["compute_spec"])
        row["impl_roofline_us"] = rt


def _label(case: PACase) -> str:
    return (
        f"ctx {case.context} B{case.batch} q{case.q_len} {case.q_heads}:{case.kv_heads} "
        f"D{case.head_dim}/{case.v_head_dim} page {case.page} {case.kv_dtype} {case.layout}"
    )


def capture_trace(path: str, items, on_gpu: bool, flush_bytes: int) -> None:
    """One launch per case under the custom op and its vLLM iteration annotation.

    Each row gets ``trace_us`` (the launch's time as the trace records it), ``trace_pct_roofline``
    (the figure ``perfreport analyze`` should reproduce from the trace) and ``trace_wall_us``
    (events or perf_counter around the call), to set beside the median of the timed reps."""
    import time

    import torch
    from torch.profiler import ProfilerActivity, profile, record_function

    from perfreport.pa.bench import trace_op as pa_op

    acts = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if on_gpu else [])
    flush = torch.empty(max(flush_bytes, 4) // 4, dtype=torch.int32, device="cuda") if on_gpu else None
    with profile(activities=acts, record_shapes=True) as prof:
        for case, inp, prep, row in items:
            with pa_op.dispatch_to(lambda *a, _p=prep: _p.run()):
                if on_gpu:
                    flush.fill_(1)
                    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                    with record_function(case.annotation()):
                        s.record()
                        pa_op.call(prep.out, inp, case)
                        e.record()
                    torch.cuda.synchronize()
                    us = s.elapsed_time(e) * 1e3
                else:
                    with record_function(case.annotation()):
                        t0 = time.perf_counter()
                        pa_op.call(prep.out, inp, case)
                        us = (time.perf_counter() - t0) * 1e6
            row["trace_wall_us"] = us
    # the time the trace itself holds for each launch (what analyze reads): the kernels' device
    # time under the op on a GPU, the op's CPU duration otherwise; the wall time as a fallback
    recorded = [e for e in prof.events() if e.name == OP_NAME]
    for i, (_, _, _, row) in enumerate(items):
        us = row["trace_wall_us"]
        if len(recorded) == len(items):
            e = recorded[i]
            dev_us = 0.0
            if on_gpu:
                dev_us = e.device_time_total if hasattr(e, "device_time_total") else e.cuda_time_total
            us = dev_us or e.cpu_time_total or us
        row["trace_us"] = us
        if row.get("roofline_us"):
            row["trace_pct_roofline"] = row["roofline_us"] / us * 100.0
    tmp = f"{path}.tmp{os.getpid()}.json"
    prof.export_chrome_trace(tmp)
    os.replace(tmp, path)


__all__ = ["BenchOptions", "BenchResult", "capture_trace", "prepare_environment", "run_bench"]
