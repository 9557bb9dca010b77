"""Compute spec from the kernels' math (pass output ``kernel_math``, perfreport/passes/kernel_math.py),
for the GEMM, convolution and MoE models.

* A block-scaled or low-precision kernel (``mxfp8``, ``mxfp6``, ``mxfp4``, ``nvfp4``, ``fp8``,
  ``fp6``) is judged against its own peak (``matrix_mxfp8`` ...), whatever dtype the trace
  recorded (MX weights are often recorded as ``unsigned char``); a 16-bit kernel math
  (``bf16``, ``fp16``: one operand upcast) against that peak.
* An FP32 op: ``tf32`` kernels against ``matrix_tf32``, ``fp32`` (SIMT) kernels against
  ``matrix_fp32``. When the kernel names do not say, the figure is an assumption with bounds
  [TF32 peak, FP32 peak] that the row names; the point figure follows PyTorch's defaults
  (``torch.backends.cuda.matmul.allow_tf32 = False`` since PyTorch 1.12, so matmuls are FP32;
  ``torch.backends.cudnn.allow_tf32 = True``, so convolutions are TF32: PyTorch docs, "CUDA
  semantics", section "TensorFloat-32 (TF32) on Ampere (and later) devices").
  :meth:`KernelMath.compute_spec_bounds` gives the two peaks; ``tables/perf.py`` computes the
  roofline range with them (a spec without ``matrix_tf32`` -- V100, CDNA2 -- collapses it).
"""

from __future__ import annotations

from perfreport.models.base import Assumption, PerfModel

OWN_PEAK = frozenset({"mxfp8", "mxfp6", "mxfp4", "nvfp4", "fp8", "fp6", "bf16", "fp16"})


class KernelMath(PerfModel):
    """Mixin: ``compute_spec`` from ``perf_meta["kernel_math"]``; ``tf32_default`` is the point
    figure's math for an FP32 op whose kernels do not say (see the module docstring)."""

    needs: tuple[str, ...] = ("kernel_math",)
    tf32_default = False

    def kernel_math(self) -> str | None:
        m = (self.op.perf_meta or {}).get("kernel_math")
        return m if isinstance(m, str) else None

    def _fp32_unknown(self) -> bool:
        return self.kind == "matrix" and self.precision() == "fp32" and self.kernel_math() not in ("tf32", "fp32")

    def compute_spec(self) -> str:
        km, p = self.kernel_math(), self.precision()
        if self.kind == "matrix" and km in OWN_PEAK:
            return f"matrix_{km}"
        if self.kind == "matrix" and p == "fp32":
            if km in ("tf32", "fp32"):
                return f"matrix_{km}"
            return "matrix_tf32" if self.tf32_default else "matrix_fp32"
        return f"{self.kind}_{p}"

    def compute_spec_bounds(self) -> tuple[str, str] | None:
        """(fast, slow) peaks of an FP32 op whose math is unknown; None otherwise."""
        return ("matrix_tf32", "matrix_fp32") if self._fp32_unknown() else None

    def math_assumptions(self) -> list[Assumption]:
        if not self._fp32_unknown():
            return []
        b = self.bytes()
        point = (
            "TF32 tensor cores (cuDNN default allow_tf32=True)"
            if self.tf32_default
            else "FP32 CUDA cores (PyTorch default matmul allow_tf32=False)"
        )
        # the bytes do not change with the math: the bounds are in the peaks (compute_spec_bounds)
        return [
            Assumption(
                f"FP32 math: {point}; the kernel names do not say whether TF32 ran (bounds: TF32 peak … FP32 peak)",
                b,
                b,
            )
        ]

    def assumptions(self) -> list[Assumption]:
        return super().assumptions() + self.math_assumptions()


__all__ = ["KernelMath", "OWN_PEAK"]
