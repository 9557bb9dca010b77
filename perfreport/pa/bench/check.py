"""The correctness check every bench-pa row (and the GPU tests) goes through.

Two errors of an output ``out`` against a reference ``ref`` (both ``[tokens, heads, Dv]``),
computed in float64:

    rel_l2  = ||out - ref||_2 / ||ref||_2          (the whole output; an all-zero output gives 1,
                                                     one with half its rows unwritten about 0.71)
    rel_max = max |out - ref| / max |ref|            (the worst element, on the output's own scale)

Both are relative to the output itself, so the check means the same at 16K context (max|ref|
about 0.06 on N(0, 1) data) as at 64K (about 0.025). The rule it replaces,
``max|out - ref| <= 0.04 * max(1, max|ref|)``, compared a 0.025-sized output with 0.04: an
output of zeros passed. A NaN or Inf anywhere fails (the comparisons are written so that NaN
is never "<="). Outputs are filled with NaN before each checked launch (:func:`poison`), so a
kernel that writes nothing, or only part of its output, fails too.

Thresholds per kernel path (:data:`TOLERANCES`) are set from the error distributions measured by
``scripts/pa_error_dist.py`` (Triton interpreter, operands rounded to the GPU operand dtypes,
against a float64 reference; table in docs/bench-pa.md): 2-5x the largest error measured on each
path, and far below what a wrong output gives (a zero output: 1.0 and 1.0; half the rows
unwritten: rel L2 about 0.71).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Tolerance:
    rel_l2: float
    rel_max: float


# Measured maxima (scripts/pa_error_dist.py, docs/bench-pa.md "Correctness check"): bf16 rel_l2
# 0.0035 / rel_max 0.0082; fp8 via f16 0.0035 / 0.0096; fp8 MMAs 0.027 / 0.054.
TOLERANCES = {
    "bf16": Tolerance(rel_l2=0.015, rel_max=0.04),  # BF16 KV, bf16 MMAs (and the torch reference)
    "fp8-f16": Tolerance(rel_l2=0.015, rel_max=0.04),  # FP8 KV dequantized to f16 in registers
    "fp8-fp8": Tolerance(rel_l2=0.08, rel_max=0.16),  # FP8 MMAs: Q and P in e4m3 (3 mantissa bits)
}
VENDOR = "fp8-fp8"  # a vendor kernel's internals are unknown: the loosest path's bound


def path_of(kv_dtype: str, fp8_mma: str = "f16") -> str:
    """The tolerance key of a kernel path: ``kv_dtype`` "bf16"/"fp8", ``fp8_mma`` "f16"/"fp8"."""
    if kv_dtype == "bf16":
        return "bf16"
    return "fp8-fp8" if fp8_mma == "fp8" else "fp8-f16"


@dataclass(frozen=True)
class CheckResult:
    ok: bool
    rel_l2: float
    rel_max: float
    max_err: float  # max |out - ref|, absolute
    ref_max: float  # max |ref|
    why: str  # "" when ok, else one line

    @property
    def summary(self) -> str:
        return f"rel L2 {self.rel_l2:.3g}, max {self.max_err:.3g} ({self.rel_max:.3g} of max|ref| {self.ref_max:.3g})"


def errors(out, ref) -> tuple[float, float, float, float]:
    """(rel_l2, rel_max, max_err, ref_max) in float64; NaN when ``out`` holds a NaN/Inf or ``ref``
    is all zeros (no relative error exists: the check fails)."""
    import torch

    o = out.detach().to(torch.float64)
    r = ref.detach().to(torch.float64)
    if o.shape != r.shape:
        raise ValueError(f"output shape {tuple(o.shape)} differs from the reference's {tuple(r.shape)}")
    nan = float("nan")
    if not bool(torch.isfinite(o).all()):
        return nan, nan, nan, float(r.abs().max())
    d = o - r
    ref_norm, ref_max = float(r.norm()), float(r.abs().max())
    max_err = float(d.abs().max())
    if ref_norm == 0.0 or ref_max == 0.0:
        return nan, nan, max_err, ref_max
    return float(d.norm()) / ref_norm, max_err / ref_max, max_err, ref_max


def check(out, ref, path: str) -> CheckResult:
    """``out`` against ``ref`` with the tolerance of ``path`` (a key of :data:`TOLERANCES`)."""
    tol = TOLERANCES[path]
    rel_l2, rel_max, max_err, ref_max = errors(out, ref)
    why = ""
    if rel_l2 != rel_l2:  # NaN
        why = "output holds NaN/Inf (unwritten or overflowed)" if max_err != max_err else "reference is all zeros"
    elif not rel_l2 <= tol.rel_l2:
        why = f"relative L2 error {rel_l2:.3g} > {tol.rel_l2:g} ({path})"
    elif not rel_max <= tol.rel_max:
        why = f"max error {max_err:.3g} = {rel_max:.3g} of max|ref| > {tol.rel_max:g} ({path})"
    return CheckResult(not why, rel_l2, rel_max, max_err, ref_max, why)


def poison(t) -> None:
    """Fill a floating-point output with NaN before a checked launch (a kernel that skips a
    write then fails the check instead of passing on a previous launch's values)."""
    t.fill_(float("nan"))


__all__ = ["TOLERANCES", "VENDOR", "CheckResult", "Tolerance", "check", "errors", "path_of", "poison"]
