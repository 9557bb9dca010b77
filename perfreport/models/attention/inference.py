"""Inference attention (serving engines): chunk statistics, split Q / KV byte accounting.

The statistics come from the step's iteration annotation (``perf_meta["iteration"]``,
written by ``perfreport.passes.iteration_annotations``, read through
:mod:`perfreport.stats.chunks`): per prefill ("c") and decode ("g") group, sq = new query
tokens, sk = KV length including them, sqsq = sum sq^2, sqsk = sum sq*sk.

FLOPs = 2*H_Q*(d_qk + d_v)*(c_pairs + g_pairs), c_pairs = c_sqsk - c_sqsq/2 (causal inside
the current prefill chunk), g_pairs = g_sqsk (decode sees every key): the same as
H_Q*(d_qk + d_v)*(2*c_sqsk - c_sqsq + 2*g_sqsk).

Sliding-window layers (window W from the op's own argument, else from ``--model-config``
through ``perf_meta["sliding_window"]``): pairs and KV tokens read per group become
min(pairs, sq*W) and min(sk, sq + R*(W-1)) (point = upper bound, with the lower bounds of
:mod:`perfreport.stats.chunks` as an :class:`~perfreport.models.base.Assumption`); c_sk / g_sk
below are then those windowed KV counts.

Bytes, six named element counts (see :meth:`InferenceAttention.byte_terms`):

* ctx_elems_q      = c_sq*H_Q*d_qk                      Q read, at the query dtype bpe_Q;
* ctx_elems_o      = c_sq*H_Q*d_v                       O written, at the output's dtype bpe_O
  (the ``O_ARG`` tensor where the signature has one: vLLM passes an FP8-quantized query with a
  BF16 output when the cache is FP8; else the query's);
* ctx_elems_new_kv = c_sq*H_KV*(d_qk + d_v)             the chunk's own K/V, at bpe_new_KV;
* ctx_elems_kv     = (c_sk - c_sq)*H_KV*(d_qk + d_v)    cached K/V, at the cache dtype bpe_KV;
* gen_elems_*: the same with g_*;
* bytes = (ctx_q + gen_q)*bpe_Q + (ctx_o + gen_o)*bpe_O + (ctx_new + gen_new)*bpe_new_KV
  + (ctx_kv + gen_kv)*bpe_KV.

Where the new tokens' K/V are read from decides bpe_new_KV: ops whose K/V arguments are the
paged cache (or, varlen, the whole K/V) read them from that tensor, at its dtype; vLLM's
``unified_attention_with_output`` takes the new K/V as ``key``/``value`` arguments and writes
them into the cache itself, unless a separate ``unified_kv_cache_update`` op did (then it reads
every key from the cache: :class:`~perfreport.models.attention.engine_ops.VllmUnifiedAttention`).

The cache dtype is never taken from the new K/V: it is the dtype of the tensor the op reads
the cache from, or one a pass found on an op that takes the cache (``perf_meta.KCache_dtype``,
:mod:`perfreport.passes.paged_attention_meta`); without either it is unknown, the point figure
takes the new key's dtype and an :class:`~perfreport.models.base.Assumption` bounds it by a
1-byte (FP8) cache. The row's ``dtype_KV_from`` parameter says which tensor gave it.

MLA (``shared_kv_latent``): K and V are one latent vector per token (V = its first d_v
elements, DeepSeek-V2 paper, arXiv 2405.04434 §2.1), so a cached token is H_KV*d_qk elements
(576 = kv_lora_rank 512 + rope 64 for DeepSeek-V3), not H_KV*(d_qk + d_v).

With dtype_KV == dtype_new_KV == dtype_O == dtype_Q (and no MLA) this equals ((c_sq + g_sq)*H_Q*(d_qk + d_v) +
(c_sk + g_sk)*H_KV*(d_qk + d_v))*bpe exactly.

d_h_v is read from the V tensor (the reference tool took it from K, which is wrong for
MLA-style Dk != Dv). FP8 caches stored as ``unsigned char`` count 1 byte; their precision
is FP8 (the only format serving stacks store as uint8; the ``kv_cache_dtype`` string
``fp8``/``fp8_e4m3`` names it when the trace records it).
"""

from __future__ import annotations

from typing import Any

from perfreport.errors import ModelError
from perfreport.models.base import Assumption, PerfModel, concrete_input, input_dims, input_type
from perfreport.models.dtypes import bytes_per_element, is_tensor_type, precision_of
from perfreport.stats.chunks import chunk_stats, window_group

BYTE_STORAGE = frozenset({"unsigned char", "uint8", "torch.uint8", "Byte"})


def _bpe(op, dtype: str) -> int | float:
    if dtype in BYTE_STORAGE:
        return 1
    try:
        b = bytes_per_element(dtype)
    except (KeyError, ValueError, ModelError):
        b = None
    if not b:
        raise ModelError(f"{op.name}: unknown element size for dtype {dtype!r}")
    return int(b) if float(b).is_integer() else b


def kv_precision(dtype_kv: str, kv_cache_dtype: str = "") -> str:
    """Precision of a KV cache: the kv_cache_dtype string first, uint8 storage is FP8."""
    s = (kv_cache_dtype or "").strip().strip("'\"").lower()
    if s.startswith("fp8"):
        return "fp8"
    if dtype_kv in BYTE_STORAGE:
        return "fp8"
    return precision_of(dtype_kv)


class InferenceAttention(PerfModel):
    """Base model; reads (query, key, value) = Input Dims[0..2], each ``[tokens, heads, dim]``.

    Subclasses with other layouts override :meth:`read_shapes` / :meth:`read_dtypes` and
    reuse :func:`perfreport.stats.chunks.chunk_stats` and the formulas.
    """

    category = "InferenceAttention_fwd"
    kind = "matrix"
    compute_in_kv_dtype = False  # True where the kernel's MMAs run in the KV dtype
    shared_kv_latent = False  # MLA: K and V are one latent vector per token (V = its head)
    WINDOW: int | None = None  # position of a sliding-window argument (keys to the left)
    O_ARG: int | None = None  # position of the output tensor (None: O at the query dtype)
    # pass outputs read: chunk statistics, FP8 cache dtype of a leaf, this layer's index and
    # its sliding window from --model-config (see perfreport/passes/attention_layers.py)
    needs = ("iteration", "KCache_dtype", "layer_index", "sliding_window")

    def __init__(self, op):
        super().__init__(op)
        self.stats = chunk_stats(op)
        shp = self.read_shapes()
        self.N_Q: int = shp["N_Q"]
        self.H_Q: int = shp["H_Q"]
        self.H_KV: int = shp["H_KV"]
        self.d_h_qk: int = shp["d_h_qk"]
        self.d_h_v: int = shp["d_h_v"]
        self.B = shp.get("B")
        if self.B is None and self.stats.prefill.reqs is not None and self.stats.decode.reqs is not None:
            self.B = self.stats.prefill.reqs + self.stats.decode.reqs
        self.kv_layout: str | None = shp.get("kv_layout")
        if min(self.H_Q, self.H_KV, self.d_h_qk, self.d_h_v) <= 0:
            raise ModelError(f"{op.name}: empty head count or head dim")
        self.kv_from = ""  # which tensor gave dtype_KV (read_dtypes sets it)
        self.kv_unknown = False  # True: no tensor shows the cache dtype (an assumption)
        self.dtype_new_KV: str | None = None  # None: the new K/V are read at dtype_KV
        self.dtype_Q, self.dtype_KV = self.read_dtypes()
        self.dtype_new_KV = self.dtype_new_KV or self.dtype_KV
        self.kv_cache_dtype = self.read_kv_cache_dtype()
        self.bpe_Q = _bpe(op, self.dtype_Q)
        self.bpe_KV = _bpe(op, self.dtype_KV)
        self.bpe_new_KV = _bpe(op, self.dtype_new_KV)
        self.dtype_O = self.read_out_dtype()
        self.bpe_O = _bpe(op, self.dtype_O)
        self.window, self.window_source = self.read_window()
        # the window is known: from the op, or the config gives this layer's (0 = full attention)
        self.window_ruled_out = self.window is not None or isinstance(op.perf_meta.get("sliding_window"), int)
        self._groups = None
        if self.window:
            c, g = self.stats.prefill, self.stats.decode
            self._groups = (
                window_group(c.sq, c.sk, c.sqsq, c.sqsk, c.reqs, self.window, decode=False),
                window_group(g.sq, g.sk, g.sqsq, g.sqsk, g.reqs, self.window, decode=True),
            )

    # -- inputs (override per layout) ---------------------------------------------------
    def read_shapes(self) -> dict[str, Any]:
        q, k, v = (input_dims(self.op, i) for i in (0, 1, 2))
        if len(q) != 3 or len(k) != 3 or len(v) != 3:
            raise ModelError(f"{self.op.name}: expected query/key/value [tokens, heads, dim]")
        return dict(N_Q=q[0], H_Q=q[1], H_KV=k[1], d_h_qk=q[2], d_h_v=v[2])

    def read_dtypes(self) -> tuple[str, str]:
        """(dtype_Q, dtype_KV) when (query, key, value) are the new tokens and the cache is no
        argument: the new K/V at the key's dtype (``Input type[1]``, else the query's); the
        cache dtype from ``perf_meta.KCache_dtype`` (a pass read it on an op that takes the
        cache), else unknown: taken = the new key's dtype, bounded in :meth:`assumptions`."""
        dq = input_type(self.op, 0)
        types = self.op.args.get("Input type") or []
        self.dtype_new_KV = (types[1] if len(types) > 1 else "") or dq
        cached = self.op.perf_meta.get("KCache_dtype")
        if cached:
            self.kv_from = self.op.perf_meta.get("KCache_source") or "perf_meta KCache_dtype"
            return dq, cached
        self.kv_unknown = True
        self.kv_from = (
            f"not in the trace (no argument or op under this one holds the cache): "
            f"taken = the new key's dtype {self.dtype_new_KV}"
        )
        return dq, self.dtype_new_KV

    def cache_dtypes(self, q: int, kv: int, what: str = "key_cache") -> tuple[str, str]:
        """(dtype_Q, dtype_KV) of an op whose argument ``kv`` is the tensor it reads every
        key from (a paged cache, or the whole K of a varlen op): the new tokens' K/V are
        read from it too, at its dtype."""
        self.kv_from = f"{what} (argument {kv})"
        return input_type(self.op, q), input_type(self.op, kv)

    def read_kv_cache_dtype(self) -> str:
        return ""

    def read_out_dtype(self) -> str:
        """The output's dtype: ``Input type[O_ARG]`` when that is a recorded tensor, else the
        query's (the kernels write O in the query dtype unless told otherwise)."""
        if self.O_ARG is not None:
            types = self.op.args.get("Input type") or []
            dims = self.op.args.get("Input Dims") or []
            i = self.O_ARG
            if i < len(types) and i < len(dims) and dims[i] and is_tensor_type(types[i]):
                return types[i]
        return self.dtype_Q

    def read_window(self) -> tuple[int | None, str]:
        """(sliding window W in keys, where it came from), (None, "") for full attention.

        The op's own argument first (``WINDOW``: a left window w means W = w + 1 keys; -1 or
        0 -> none), else ``perf_meta["sliding_window"]`` that the "attention layers" pass took
        from ``--model-config`` for this op's layer (0 = that layer is full attention).
        """
        if self.WINDOW is not None:
            ci = concrete_input(self.op, self.WINDOW)
            try:
                w = int(float(ci)) if ci not in ("", None) else None
            except ValueError:
                w = None
            if w is not None and w > 0:
                return w + 1, f"op argument {self.WINDOW} (window_left {w})"
        w = self.op.perf_meta.get("sliding_window")
        if isinstance(w, int) and w > 0:
            layer = self.op.perf_meta.get("layer_index")
            return w, f"model config, layer {layer}"
        return None, ""

    # -- model ----------------------------------------------------------------------------
    def params(self) -> dict[str, Any]:
        s = self.stats
        p: dict[str, Any] = {
            "B": self.B,
            "N_Q": self.N_Q,
            "H_Q": self.H_Q,
            "N_KV": s.prefill.sk + s.decode.sk,
            "H_KV": self.H_KV,
            "d_h_qk": self.d_h_qk,
            "d_h_v": self.d_h_v,
        }
        p.update(s.by_key())
        p["dtype_Q"] = self.dtype_Q
        p["dtype_KV"] = self.dtype_KV
        p["dtype_KV_from"] = self.kv_from
        if self.dtype_new_KV != self.dtype_KV:
            p["dtype_new_KV"] = self.dtype_new_KV
        if self.dtype_O != self.dtype_Q:
            p["dtype_O"] = self.dtype_O
        if self.window:
            p["sliding_window"] = self.window
            p["N_KV"] = self._groups[0].keys + self._groups[1].keys
        return p

    def pairs(self) -> tuple[float, float]:
        """(prefill, decode) (query, key) pairs: causal inside the prefill chunk
        (sqsk - sqsq/2), every key for decode (sqsk); capped by the sliding window."""
        if self._groups is not None:
            return self._groups[0].pairs, self._groups[1].pairs
        c, g = self.stats.prefill, self.stats.decode
        return c.sqsk - c.sqsq / 2, float(g.sqsk)

    def flops_for(self, c_pairs: float, g_pairs: float) -> float:
        return 2.0 * self.H_Q * (self.d_h_qk + self.d_h_v) * (c_pairs + g_pairs)

    def flops(self) -> float:
        return self.flops_for(*self.pairs())

    def keys(self) -> tuple[float, float]:
        """(prefill, decode) KV tokens read, new ones included (sk, or the window's share)."""
        if self._groups is not None:
            return self._groups[0].keys, self._groups[1].keys
        return float(self.stats.prefill.sk), float(self.stats.decode.sk)

    def byte_terms(self, keys: tuple[float, float] | None = None) -> dict[str, Any]:
        """The four element counts and the two element sizes behind :meth:`bytes`."""
        c, g = self.stats.prefill, self.stats.decode
        c_keys, g_keys = keys if keys is not None else self.keys()
        hq, hkv, dk, dv = self.H_Q, self.H_KV, self.d_h_qk, self.d_h_v
        kv_per_token = hkv * dk if self.shared_kv_latent else hkv * (dk + dv)
        return {
            "ctx_elems_q": c.sq * hq * dk,
            "ctx_elems_o": c.sq * hq * dv,
            "ctx_elems_new_kv": c.sq * kv_per_token,
            "ctx_elems_kv": max(c_keys - c.sq, 0) * kv_per_token,
            "gen_elems_q": g.sq * hq * dk,
            "gen_elems_o": g.sq * hq * dv,
            "gen_elems_new_kv": g.sq * kv_per_token,
            "gen_elems_kv": max(g_keys - g.sq, 0) * kv_per_token,
            "bpe_Q": self.bpe_Q,
            "bpe_O": self.bpe_O,
            "bpe_new_KV": self.bpe_new_KV,
            "bpe_KV": self.bpe_KV,
        }

    def bytes_for(self, keys: tuple[float, float] | None = None, bpe_kv: float | None = None) -> float:
        """Bytes of one call; ``bpe_kv`` replaces the cache's element size (the bounds of an
        unknown cache dtype)."""
        t = self.byte_terms(keys)
        kv = t["bpe_KV"] if bpe_kv is None else bpe_kv
        return float(
            (t["ctx_elems_q"] + t["gen_elems_q"]) * t["bpe_Q"]
            + (t["ctx_elems_o"] + t["gen_elems_o"]) * t["bpe_O"]
            + (t["ctx_elems_new_kv"] + t["gen_elems_new_kv"]) * t["bpe_new_KV"]
            + (t["ctx_elems_kv"] + t["gen_elems_kv"]) * kv
        )

    def bytes(self) -> float:
        return self.bytes_for()

    def assumptions(self) -> list[Assumption]:
        out = []
        if self.kv_unknown and self.bpe_KV > 1:
            b = self.bytes()
            out.append(
                Assumption(
                    f"KV-cache dtype not in the trace: taken = the new key's {self.dtype_KV} "
                    f"({self.bpe_KV} B per element; bounds 1 B, an FP8 cache … {self.bpe_KV} B)",
                    bytes_min=self.bytes_for(bpe_kv=1),
                    bytes_max=b,
                )
            )
        if self._groups is not None:
            c, g = self._groups
            f, b = self.flops(), self.bytes()
            if not (c.exact and g.exact):
                out.append(
                    Assumption(
                        f"sliding window {self.window} ({self.window_source}): every request's "
                        f"context taken as >= window + its new tokens, {c.keys + g.keys:.0f} of "
                        f"{c.full_keys + g.full_keys:.0f} KV tokens read (bounds "
                        f"{c.keys_lo + g.keys_lo:.0f} … {c.keys + g.keys:.0f}: per-request lengths "
                        "are not in the annotation)",
                        bytes_min=self.bytes_for((c.keys_lo, g.keys_lo)),
                        bytes_max=b,
                        flops_min=self.flops_for(c.pairs_lo, g.pairs_lo),
                        flops_max=f,
                    )
                )
        est = self.stats.estimated
        if est and self._groups is None:
            lo, hi = {}, {}
            for p, grp in (("c", self.stats.prefill), ("g", self.stats.decode)):
                sqsq = grp.estimated.get("sqsq", (grp.sqsq,) * 2)
                sqsk = grp.estimated.get("sqsk", (grp.sqsk,) * 2)
                if p == "c":
                    lo[p] = max(sqsk[0] - sqsq[1] / 2, float(grp.sq))
                    hi[p] = sqsk[1] - sqsq[0] / 2
                else:
                    lo[p], hi[p] = float(sqsk[0]), float(sqsk[1])
            out.append(
                Assumption(
                    f"per-request lengths: {', '.join(sorted(est))} estimated from sums "
                    f"({self.stats.annotation or 'compact annotation'}), requests taken as equal",
                    bytes_min=self.bytes(),
                    bytes_max=self.bytes(),
                    flops_min=self.flops_for(lo["c"], lo["g"]),
                    flops_max=self.flops_for(hi["c"], hi["g"]),
                )
            )
        return out

    def precision(self) -> str:
        if self.compute_in_kv_dtype:
            return kv_precision(self.dtype_KV, self.kv_cache_dtype)
        return precision_of(self.dtype_Q)


__all__ = [
    "kv_precision",
    "InferenceAttention",
]
