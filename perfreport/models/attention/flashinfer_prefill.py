"""FlashInfer batch prefill (ragged K/V and paged KV cache), on the step's chunk statistics.

Recorded names (which FlashInfer versions record which op) and the URI naming each compiled
variant: :mod:`perfreport.models.attention.flashinfer_names`; the model takes dtypes and dims from the
tensors and refuses a name whose head dims disagree with them.

Positional arguments (v0.2.1 – v0.3.x C++ binding, identical up to ``window_left`` for FA2 and
SM90 and at HEAD; later arguments differ by version and are not read):

* ragged_run: (float_workspace_buffer, int_workspace_buffer, plan_info_vec, q [total_q, H_Q,
  D_qk], k, v, qo_indptr [B+1], kv_indptr [B+1], o, maybe_lse, mask_mode_code, layout,
  window_left, ...); k/v NHD ``[total_k, H_KV, D]`` (layout 0) or HND ``[H_KV, total_k, D]``;
* paged_run: (float_workspace_buffer, int_workspace_buffer, plan_info_vec, q, paged_k_cache,
  paged_v_cache, qo_indptr, paged_kv_indptr, paged_kv_indices, paged_kv_last_page_len, o,
  maybe_lse, mask_mode_code, layout, window_left, ...); caches NHD ``[pages, page, H_KV, D]``
  or HND ``[pages, H_KV, page, D]`` (``utils.TensorLayout``);
* v0.2.0 ragged: (mask_mode, float_ws, int_ws, plan_info_vec, q, k, v, maybe_custom_mask,
  maybe_alibi_slopes, qo_indptr, kv_indptr, maybe_qk_indptr, layout, window_left, ...);
  paged: (mask_mode, float_ws, int_ws, plan_info_vec, q, paged_k_cache, paged_v_cache,
  maybe_custom_mask, maybe_alibi_slopes, qo_indptr, paged_kv_indptr, paged_kv_indices,
  paged_kv_last_page_len, maybe_qk_indptr, layout, window_left, ...).

mask_mode (``utils.MaskMode``): 0 non-causal, 1 causal, 2 custom, 3 multi-item scoring.

Per-request lengths: the profiler records shapes, never tensor values, so qo_indptr/kv_indptr
contents are not in a trace. They come from the step's iteration annotation when its groups
match the shapes: N_Q = c_sq (the prefill requests) or c_sq + g_sq (every request, decode rows
as 1-token requests); ragged K holds either every key of each request (total_k = Σsk) or only
the new tokens (total_k = Σsq, SGLang's ragged pass over the extend tokens: sk_i = sq_i,
sqsk = sqsq); a causal paged run reads every key (the cache holds the new ones), a non-causal
one is taken as SGLang's prefix pass (``sglang/srt/layers/attention/flashinfer_backend.py``
``forward_extend``: ragged over the new tokens with causal=True, paged over the cached prefix
with causal=False, merged by LSE): sk_i − sq_i keys, sqsk − sqsq pairs, every key as the
Assumption's other bound. Otherwise the sums come from the shapes (B = len(qo_indptr) − 1, total_q, total_k
or, paged, between (pages − B)·page + B (causal: and at least N_Q, the cache holds the new
tokens) and pages·page keys, point = the upper bound) with sqsq/sqsk estimated for equal
requests (``stats.iteration_formats.group_from_sums``; a non-causal paged run, whose prefix
may be shorter than its new tokens, bounds sqsk by sk … sq·sk) and the bounds as
:class:`~perfreport.models.base.Assumption`.

Per group (sq, sk, sqsq, sqsk): pairs = sqsk − sqsq/2 causal (the bottom-right count of the
other prefill models), sqsk non-causal and for decode rows; window_left = w ≥ 0 caps a causal
group at W = w + 1 keys (``stats.chunks.window_group``); a custom mask counts every pair
(bounds: the causal count … every pair).

* FLOPs = 2·H_Q·(d_qk + d_v)·Σpairs;
* bytes = N_Q·H_Q·(d_qk·bpe_Q + d_v·bpe_O)  (Q read, O written)
        + N_KV·H_KV·(d_qk + d_v)·bpe_KV     (each KV head's keys read once for its H_Q/H_KV
          query heads; the paged cache already holds the new tokens, so every key is read at
          the cache dtype: FP8 = 1 byte).

Compute precision: the query dtype (FA2 dequantizes FP8 pages to it; FP8 FA3 takes FP8 q).
"""

from __future__ import annotations

from typing import Any

from perfreport.errors import ModelError
from perfreport.models.args import arg_int, tensor, tensor_opt
from perfreport.models.base import Assumption, PerfModel
from perfreport.models.dtypes import precision_of
from perfreport.models.attention.flashinfer_names import parse_uri
from perfreport.models.attention.inference import _bpe
from perfreport.stats.chunks import GroupStats, chunk_stats, window_group
from perfreport.stats.iteration_formats import group_from_sums

MASKS = {0: "non-causal", 1: "causal", 2: "custom", 3: "multi-item"}


def _group(st: GroupStats, decode=False) -> dict[str, Any]:
    """One group of the chunk statistics as the fit below reshapes it (sk, sqsk, a note)."""
    return dict(sq=st.sq, sk=st.sk, sqsq=st.sqsq, sqsk=st.sqsk, reqs=st.reqs, decode=decode, est=dict(st.estimated))


class FlashInferRaggedPrefill(PerfModel):
    """``<uri>::ragged_run`` (v0.2.1 – v0.3.x; see the module doc)."""

    category = "InferenceAttention_fwd"
    kind = "matrix"
    needs = ("iteration",)
    paged = False
    Q, K, V, QO_INDPTR, KV_INDPTR, O, LAYOUT, WINDOW = 3, 4, 5, 6, 7, 8, 11, 12
    MASK_AT = 10

    def __init__(self, op):
        super().__init__(op)
        q = tensor(op, self.Q, "q")
        if len(q.shape) != 3:
            raise ModelError(f"{op.name}: expected q [total_q, H_Q, D] at argument {self.Q}")
        self.N_Q, self.H_Q, self.d_h_qk = q.shape
        self.dtype_Q = q.dtype
        o = tensor_opt(op, self.O) if self.O is not None else None
        self.dtype_O = o.dtype if o is not None else q.dtype
        self.layout = {0: "NHD", 1: "HND"}.get(arg_int(op, self.LAYOUT, 0), "NHD")
        self.read_kv()
        self.uri = parse_uri(op.name)
        if self.uri and (self.uri["head_dim_qk"], self.uri["head_dim_vo"]) != (self.d_h_qk, self.d_h_v):
            raise ModelError(
                f"{op.name}: name says head dims {self.uri['head_dim_qk']}/"
                f"{self.uri['head_dim_vo']}, tensors {self.d_h_qk}/{self.d_h_v}"
            )
        ind = tensor(op, self.QO_INDPTR, "qo_indptr").shape
        self.B = max(ind[0] - 1, 0) if len(ind) == 1 else None
        self.mask = arg_int(op, self.MASK_AT, 1)
        wl = arg_int(op, self.WINDOW, -1)
        self.window = wl + 1 if wl is not None and wl >= 0 else None
        self.bpe_Q, self.bpe_O, self.bpe_KV = (_bpe(op, d) for d in (self.dtype_Q, self.dtype_O, self.dtype_KV))
        self.groups, self.lengths, self.kv_bounds = self.read_lengths()

    # -- inputs -------------------------------------------------------------------------
    def read_kv(self) -> None:
        k, v = tensor(self.op, self.K, "k"), tensor(self.op, self.V, "v")
        if len(k.shape) != 3 or len(v.shape) != 3:
            raise ModelError(f"{self.op.name}: expected ragged k/v [total_k, H_KV, D]")
        hd = 0 if self.layout == "HND" else 1
        self.H_KV, self.total_k = k.shape[hd], k.shape[1 - hd]
        if self.d_h_qk != k.shape[2]:
            raise ModelError(f"{self.op.name}: q head dim {self.d_h_qk} != k head dim {k.shape[2]}")
        self.d_h_v, self.dtype_KV, self.kv_layout, self.page = v.shape[2], k.dtype, self.layout, None

    def shape_keys(self) -> tuple[int, int]:
        """(low, high) KV tokens the shapes allow: ragged K holds exactly total_k."""
        return self.total_k, self.total_k

    def read_lengths(self):
        """(groups, source text, (keys low, keys high) or None) -- see the module doc."""
        why = ""
        try:
            s = chunk_stats(self.op)
        except ModelError as exc:
            s, why = None, str(exc).split(": ", 1)[-1]
        if s is not None:
            c, g = _group(s.prefill), _group(s.decode, True)
            if self.N_Q == c["sq"] and c["sq"] > 0:
                groups, what = [c], "prefill group"
            elif self.N_Q == c["sq"] + g["sq"]:
                groups, what = [c, g], "prefill + decode groups"
            else:
                groups, what = None, ""
                why = f"q holds {self.N_Q} tokens, the annotation {c['sq']} prefill + {g['sq']} decode"
            if groups is not None:
                fitted = self.fit_keys(groups)
                if fitted is not None:
                    return fitted, f"chunk statistics ({what}{fitted[0].get('note', '')})", None
                why = f"K/V shapes do not match the annotation's {what} lengths"
        return self.from_shapes(why)

    def fit_keys(self, groups):
        """The annotation's groups with sk as this op's K/V holds them, or None."""
        sk, sq = sum(g["sk"] for g in groups), sum(g["sq"] for g in groups)
        if self.total_k == sk:
            return groups
        if self.total_k == sq:  # K/V = the new tokens only: sk_i = sq_i
            out = [
                dict(g, sk=g["sq"], sqsk=g["sqsq"], est={"sqsk": g["est"]["sqsq"]} if "sqsq" in g["est"] else {})
                for g in groups
            ]
            out[0]["note"] = "; K/V = new tokens only"
            return out
        return None

    def from_shapes(self, why: str):
        lo, hi = self.shape_keys()
        r = self.B or 1
        st = group_from_sums("", r, self.N_Q, hi)
        est = {k[1:]: v for k, v in st.get("estimated", {}).items()}
        g = _group(GroupStats(self.N_Q, hi, st["_sqsq"], st["_sqsk"], r, est))
        text = f"shapes only ({why})" if why else "shapes only"
        return [g], text, ((lo, hi) if lo != hi else None)

    # -- model --------------------------------------------------------------------------
    @property
    def causal(self) -> bool:
        return self.mask != 0

    def group_work(self, g: dict[str, Any], low: bool = False, causal_count: bool = False) -> tuple[float, float]:
        """(pairs, keys) of one group; ``low``: the window's lower bounds; ``causal_count``: a
        custom / multi-item mask counted as causal (its lower bound) instead of every pair."""
        if g["sq"] <= 0:
            return 0.0, 0.0
        if self.window and self.causal:
            w = window_group(g["sq"], g["sk"], g["sqsq"], g["sqsk"], g["reqs"], self.window, decode=g["decode"])
            return (w.pairs_lo, w.keys_lo) if low else (w.pairs, w.keys)
        if g["decode"] or not self.causal or (self.mask >= 2 and not causal_count):
            return float(g["sqsk"]), float(g["sk"])
        return g["sqsk"] - g["sqsq"] / 2, float(g["sk"])

    def totals(self, groups=None, low: bool = False, causal_count: bool = False) -> tuple[float, float]:
        """(FLOPs, bytes) of one call over ``groups`` (default: the point groups)."""
        pairs = keys = 0.0
        for g in groups if groups is not None else self.groups:
            p, k = self.group_work(g, low, causal_count)
            pairs, keys = pairs + p, keys + k
        flops = 2.0 * self.H_Q * (self.d_h_qk + self.d_h_v) * pairs
        nbytes = (
            self.N_Q * self.H_Q * (self.d_h_qk * self.bpe_Q + self.d_h_v * self.bpe_O)
            + keys * self.H_KV * (self.d_h_qk + self.d_h_v) * self.bpe_KV
        )
        return flops, float(nbytes)

    def flops(self) -> float:
        return self.totals()[0]

    def bytes(self) -> float:
        return self.totals()[1]

    def kv_tokens(self) -> float:
        return sum(self.group_work(g)[1] for g in self.groups)

    def params(self) -> dict[str, Any]:
        n_kv = self.kv_tokens()
        p: dict[str, Any] = {
            "B": self.B,
            "N_Q": self.N_Q,
            "H_Q": self.H_Q,
            "N_KV": n_kv,
            "H_KV": self.H_KV,
            "d_h_qk": self.d_h_qk,
            "d_h_v": self.d_h_v,
            "mask": MASKS.get(self.mask, self.mask),
            "kv_layout": self.kv_layout,
            "page_size": self.page,
            "lengths": self.lengths,
            "dtype_Q": self.dtype_Q,
            "dtype_KV": self.dtype_KV,
            "dtype_KV_from": f"{'paged_k_cache' if self.paged else 'k'} (argument {self.K})",
            "bytes_QO": self.N_Q * self.H_Q * (self.d_h_qk * self.bpe_Q + self.d_h_v * self.bpe_O),
            "bytes_KV": n_kv * self.H_KV * (self.d_h_qk + self.d_h_v) * self.bpe_KV,
        }
        if self.window:
            p["sliding_window"] = self.window if self.causal else f"{self.window} (not applied: non-causal)"
        if self.uri:
            p["backend"] = self.uri["backend"]
        return p

    def assumptions(self) -> list[Assumption]:
        f, b = self.totals()
        out = []
        if self.window and self.causal:
            fl, bl = self.totals(low=True)
            if (fl, bl) != (f, b):
                out.append(
                    Assumption(
                        f"sliding window {self.window} (window_left {self.window - 1}): every "
                        "request's context taken as >= window + its new tokens (per-request "
                        "lengths are not in the trace)",
                        bytes_min=bl,
                        bytes_max=b,
                        flops_min=fl,
                        flops_max=f,
                    )
                )
        if self.kv_bounds is not None:
            lo, hi = self.kv_bounds
            g = self.groups[0]
            st = group_from_sums("", g["reqs"], g["sq"], lo)
            fl, bl = self.totals([dict(g, sk=lo, sqsk=st["_sqsk"])])
            out.append(
                Assumption(
                    f"KV tokens: {hi} (every listed page full; bounds {lo} … {hi}: last-page fill is not recorded)",
                    bytes_min=bl,
                    bytes_max=b,
                    flops_min=fl,
                    flops_max=f,
                )
            )
        est = [(i, g) for i, g in enumerate(self.groups) if g["est"]]
        if est:
            lo_g, hi_g = list(self.groups), list(self.groups)
            for i, g in est:
                sqsq = g["est"].get("sqsq", (g["sqsq"],) * 2)
                sqsk = g["est"].get("sqsk", (g["sqsk"],) * 2)
                lo_g[i] = dict(g, sqsq=sqsq[1], sqsk=sqsk[0])
                hi_g[i] = dict(g, sqsq=sqsq[0], sqsk=sqsk[1])
            fl, fh = self.totals(lo_g)[0], self.totals(hi_g)[0]
            out.append(
                Assumption(
                    f"per-request lengths: sqsq/sqsk estimated for equal requests ({self.lengths})",
                    bytes_min=b,
                    bytes_max=b,
                    flops_min=max(min(fl, fh), 0.0),
                    flops_max=max(fl, fh),
                )
            )
        if self.mask >= 2:
            fl = self.totals(causal_count=True)[0]
            out.append(
                Assumption(
                    f"{MASKS.get(self.mask, self.mask)} mask: density unknown, every (q, k) pair "
                    "counted (bounds: the causal count … every pair)",
                    bytes_min=b,
                    bytes_max=b,
                    flops_min=min(fl, f),
                    flops_max=f,
                )
            )
        return out

    def precision(self) -> str:
        return precision_of(self.dtype_Q)


class FlashInferRaggedPrefillV020(FlashInferRaggedPrefill):
    """``flashinfer::<uri>_ragged_run`` (v0.2.0 custom op, mask_mode first; module doc)."""

    Q, K, V, QO_INDPTR, KV_INDPTR, O, LAYOUT, WINDOW = 4, 5, 6, 9, 10, None, 12, 13
    MASK_AT = 0


__all__ = [
    "FlashInferRaggedPrefill",
    "FlashInferRaggedPrefillV020",
]
