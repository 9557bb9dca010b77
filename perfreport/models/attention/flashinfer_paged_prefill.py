"""FlashInfer batch prefill on a paged KV cache: ``<uri>::paged_run`` and the v0.2.0 custom op.

Arguments, per-request lengths and formulas: :mod:`perfreport.models.attention.flashinfer_prefill`
(the ragged model this one extends); the paged cache bounds the keys by its pages, and a
non-causal run is taken as SGLang's prefix pass (see that module's doc)."""

from __future__ import annotations


from perfreport.errors import ModelError
from perfreport.models.args import tensor
from perfreport.models.attention.engine_ops import layout_heads
from perfreport.models.attention.flashinfer_prefill import FlashInferRaggedPrefill
from perfreport.models.base import Assumption


class FlashInferPagedPrefill(FlashInferRaggedPrefill):
    """``<uri>::paged_run`` (v0.2.1 – v0.3.x; see the module doc)."""

    paged = True
    full_groups = None  # set by fit_keys when a non-causal run is taken as the prefix pass
    Q, K, V, QO_INDPTR, KV_INDPTR, KV_INDICES, LAST_PAGE, O, LAYOUT, WINDOW = (3, 4, 5, 6, 7, 8, 9, 10, 13, 14)
    MASK_AT = 12

    def read_kv(self) -> None:
        k, v = tensor(self.op, self.K, "paged_k_cache"), tensor(self.op, self.V, "paged_v_cache")
        out = layout_heads(self.op, list(k.shape), list(v.shape), self.layout, self.H_Q)
        if len(k.shape) != 4 or out["d_h_qk"] != self.d_h_qk:
            raise ModelError(
                f"{self.op.name}: expected 4D paged caches with head dim {self.d_h_qk}, got {list(k.shape)}"
            )
        self.H_KV, self.d_h_v, self.kv_layout = out["H_KV"], out["d_h_v"], out["kv_layout"]
        self.page = k.shape[1] if self.kv_layout == "NHD" else k.shape[2]
        self.dtype_KV = k.dtype
        ind = tensor(self.op, self.KV_INDICES, "paged_kv_indices").shape
        self.pages = ind[0] if len(ind) == 1 else None
        self.total_k = None

    def shape_keys(self) -> tuple[int, int]:
        if self.pages is None:
            raise ModelError(f"{self.op.name}: paged_kv_indices is not 1-d")
        r = self.B or 1
        hi = self.pages * self.page
        # every request's last page holds >= 1 key; a causal run's cache also holds its new
        # tokens (keys >= N_Q), a non-causal prefix pass's need not (a prefix shorter than them)
        return max(hi - r * (self.page - 1), self.N_Q if self.causal else 0, 0), hi

    def from_shapes(self, why: str):
        """The shared estimate; a non-causal run (the prefix pass: sk_i < sq_i possible) bounds
        sqsk by sk (each key paired with >= 1 query of its request) instead of sq²/R, which
        assumes sk_i >= sq_i."""
        groups, text, kv = super().from_shapes(why)
        g = groups[0]
        if self.mask == 0 and "sqsk" in g["est"]:
            g["est"] = dict(g["est"], sqsk=(min(g["sk"], g["sqsk"]), g["est"]["sqsk"][1]))
        return groups, text, kv

    def fit_keys(self, groups):
        """Causal: the paged cache holds every key of each request (new ones appended).
        Non-causal: SGLang's split pass over the cached prefix only (its new tokens go through
        ragged_run, the two merged by LSE): sk_i - sq_i keys, sqsk - sqsq pairs."""
        full = groups
        if self.mask == 0:
            groups = [
                dict(g, sk=g["sk"] - g["sq"], sqsk=g["sqsk"] - g["sqsq"], est=_prefix_est(g["est"])) for g in groups
            ]
            groups[0]["note"] = "; non-causal: cached prefix only"
        sk = sum(g["sk"] for g in groups)
        if self.pages is not None and sk > self.pages * self.page:
            return None
        if self.mask == 0:
            self.full_groups = full  # every key of each request: the prefix pass's other bound
        return groups

    def assumptions(self) -> list[Assumption]:
        out = super().assumptions()
        if self.full_groups is not None:
            f, b = self.totals()
            fh, bh = self.totals(self.full_groups)
            out.append(
                Assumption(
                    "non-causal paged run taken as SGLang's prefix pass (keys = cached prefix; "
                    "bounds up to every key of each request)",
                    bytes_min=b,
                    bytes_max=bh,
                    flops_min=f,
                    flops_max=fh,
                )
            )
        return out


def _prefix_est(est: dict) -> dict:
    """Bounds of sqsk - sqsq from those of sqsk and sqsq (compact annotations)."""
    if not est:
        return {}
    sqsq = est.get("sqsq")
    sqsk = est.get("sqsk")
    if sqsq is None or sqsk is None:
        return {}
    return {"sqsk": (max(sqsk[0] - sqsq[1], 0), max(sqsk[1] - sqsq[0], 0))}


class FlashInferPagedPrefillV020(FlashInferPagedPrefill):
    """``flashinfer::<uri>_paged_run`` (v0.2.0 custom op, mask_mode first; module doc)."""

    Q, K, V, QO_INDPTR, KV_INDPTR, KV_INDICES, LAST_PAGE, O, LAYOUT, WINDOW = (4, 5, 6, 9, 10, 11, 12, None, 14, 15)
    MASK_AT = 0


__all__ = ["FlashInferPagedPrefill", "FlashInferPagedPrefillV020"]
