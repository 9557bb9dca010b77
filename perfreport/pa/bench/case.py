"""One bench case and its op view for the paged-attention perf model (shared with ``--trace``).

The view is what ``torch.profiler(record_shapes=True)`` records for the custom op
``perfreport::paged_attention_decode(out, query, key_cache, value_cache, block_tables,
context_lens, k_scale, v_scale, scale, kv_layout)`` (see :mod:`perfreport.pa.bench.trace_op`), plus the
``perf_meta["iteration"]`` statistics that ``analyze``'s annotation pass derives from the vLLM
annotation the trace path writes. So ``bench-pa`` and ``perfreport analyze`` evaluate the same
model class (``perfreport.models.registry.model_for``) on the same numbers.

Pure Python: no torch import.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from types import SimpleNamespace

OP_NAME = "perfreport::paged_attention_decode"

# KV storage dtype -> trace dtype name (as torch.profiler writes it)
TRACE_DTYPE = {
    "bf16": "c10::BFloat16",
    "fp8": "c10::Float8_e4m3fn",
    "fp8_fnuz": "c10::Float8_e4m3fnuz",
    "uint8": "unsigned char",
}


@dataclass(frozen=True)
class PACase:
    """One point of the bench grid. Every sequence of the batch has the same context length."""

    context: int
    batch: int = 32
    q_len: int = 4
    q_heads: int = 16
    kv_heads: int = 1
    head_dim: int = 192
    v_head_dim: int = 128
    page: int = 64
    kv_dtype: str = "bf16"  # "bf16" | "fp8"
    layout: str = "NHD"  # "NHD" | "5D" | "5DV" (5D K and vectorized 5D V)
    kv_storage: str = ""  # TRACE_DTYPE key of the cache tensors; "" = from kv_dtype

    @property
    def storage(self) -> str:
        return self.kv_storage or ("bf16" if self.kv_dtype == "bf16" else "fp8")

    @property
    def kernel_layout(self) -> str:
        """The kernel's layout name: "5D" for both 5D forms (the V cache's rank tells them apart)."""
        return "NHD" if self.layout == "NHD" else "5D"

    @property
    def v5(self) -> bool:
        return self.layout == "5DV"

    def inputs(self, **kw):
        """This case's random query, paged caches and block tables
        (:func:`perfreport.pa.kernel.cache.build_inputs`; ``kw``: ``device``, ``seed``)."""
        from perfreport.pa.kernel.cache import build_inputs

        return build_inputs(
            self.context_lens,
            q_len=self.q_len,
            q_heads=self.q_heads,
            kv_heads=self.kv_heads,
            head_dim=self.head_dim,
            v_head_dim=self.v_head_dim,
            page_size=self.page,
            kv_dtype=self.kv_dtype,
            layout=self.kernel_layout,
            v5=self.v5,
            **kw,
        )

    @property
    def pages_per_seq(self) -> int:
        return -(-self.context // self.page)

    @property
    def num_blocks(self) -> int:
        return self.batch * self.pages_per_seq

    @property
    def scale(self) -> float:
        return self.head_dim**-0.5

    @property
    def context_lens(self) -> list[int]:
        return [self.context] * self.batch

    def with_storage(self, storage: str) -> "PACase":
        return replace(self, kv_storage=storage)

    def iteration(self) -> dict:
        """Decode-only chunk statistics of this step (vLLM detailed annotation semantics)."""
        b, q, ctx = self.batch, self.q_len, self.context
        return {
            "c_sq": 0,
            "c_sk": 0,
            "c_sqsq": 0,
            "c_sqsk": 0,
            "g_sq": b * q,
            "g_sk": b * ctx,
            "g_sqsq": b * q * q,
            "g_sqsk": b * q * ctx,
            "c_reqs": 0,
            "g_reqs": b,
        }

    def annotation(self) -> str:
        """The vLLM detailed iteration annotation for this step."""
        it = self.iteration()
        return (
            f"execute_{it['g_sq']}_context_0(sq0sk0sqsq0sqsk0)_generation_{self.batch}"
            f"(sq{it['g_sq']}sk{it['g_sk']}sqsq{it['g_sqsq']}sqsk{it['g_sqsk']})"
        )

    def cache_dims(self) -> tuple[list[int], list[int]]:
        nb, p, h, dk, dv = self.num_blocks, self.page, self.kv_heads, self.head_dim, self.v_head_dim
        if self.layout in ("5D", "5DV"):
            x = 16 // (2 if self.storage == "bf16" else 1)
            return [nb, h, dk // x, p, x], ([nb, h, p // x, dv, x] if self.v5 else [nb, h, dv, p])
        return [nb, p, h, dk], [nb, p, h, dv]


def op_view(case: PACase) -> SimpleNamespace:
    """The op event ``analyze`` would see for one launch of this case."""
    rows = case.batch * case.q_len
    k_dims, v_dims = case.cache_dims()
    kv_t = TRACE_DTYPE[case.storage]
    scaled = case.kv_dtype == "fp8"
    args = {
        "Input Dims": [
            [rows, case.q_heads, case.v_head_dim],
            [rows, case.q_heads, case.head_dim],
            k_dims,
            v_dims,
            [case.batch, case.pages_per_seq],
            [case.batch],
            [1] if scaled else [],
            [1] if scaled else [],
            [],
            [],
        ],
        "Input type": [
            "c10::BFloat16",
            "c10::BFloat16",
            kv_t,
            kv_t,
            "int",
            "int",
            "float" if scaled else "",
            "float" if scaled else "",
            "Scalar",
            "",
        ],
        "Concrete Inputs": ["", "", "", "", "", "", "", "", repr(float(case.scale)), case.kernel_layout],
    }
    return SimpleNamespace(name=OP_NAME, args=args, perf_meta={"iteration": case.iteration()})


def model_for_case(case: PACase):
    """``(model, None)`` with the registry's model evaluated on this case, or ``(None, reason)``."""
    try:
        from perfreport.models.registry import model_for
    except ImportError as exc:  # pragma: no cover - the registry ships with perfreport
        return None, f"perf model registry unavailable: {exc}"
    cls = model_for(OP_NAME)
    if cls is None:
        return None, f"no perf model registered for {OP_NAME}"
    try:
        return cls(op_view(case)), None
    except Exception as exc:  # ModelError or a model bug: the row keeps its times
        return None, f"{type(exc).__name__}: {exc}"


def roofline_for_case(case: PACase, spec):
    """dict(flops, bytes, compute_spec, roofline_us, bound, reason) for ``case`` on ``spec``."""
    model, reason = model_for_case(case)
    out = {"flops": None, "bytes": None, "compute_spec": "", "roofline_us": None, "bound": "", "reason": reason or ""}
    if model is None:
        return out
    out.update(flops=float(model.flops()), bytes=float(model.bytes()), compute_spec=model.compute_spec())
    if spec is None:
        out["reason"] = "no GPU spec (use --arch)"
        return out
    from perfreport.specs import roofline

    rt, bound = roofline(spec, out["flops"], out["bytes"], out["compute_spec"])
    if rt is None:
        out["reason"] = f"{spec.name} has no {out['compute_spec']} peak or bandwidth"
    out.update(roofline_us=rt, bound=bound or "")
    return out


__all__ = ["OP_NAME", "PACase", "TRACE_DTYPE", "model_for_case", "op_view", "roofline_for_case"]
