"""Chunk statistics as models read them, and what a sliding window leaves of them.

``perf_meta["iteration"]`` (written by the "iteration annotations" pass from
:mod:`.iteration_formats`) holds, per prefill ("c") and decode ("g") group of one step:
R = requests, sq = sum of new query tokens, sk = sum of KV lengths including them,
sqsq = sum sq_i^2, sqsk = sum sq_i*sk_i.

Sliding window W (a query at position p sees keys p-W+1 .. p, Hugging Face
``sliding_window`` semantics, so W keys including itself): per request i with sq_i new
tokens at positions sk_i-sq_i .. sk_i-1,

* keys read   kv_i    = min(sk_i, sq_i + W - 1)          (the union of the windows);
* (q, k) pairs pairs_i = sum over its queries of min(p + 1, W).

The trace gives sums only, so :func:`window_group` returns the point value and bounds:

* point (and upper bound, since sum(min(a_i, b_i)) <= min(sum a_i, sum b_i)):
  keys = min(sk, sq + R*(W-1)); pairs = min(full_pairs, sq*W), full_pairs = sqsk - sqsq/2
  for prefill (causal inside the chunk, the full-attention model's count) and sqsk for decode;
  it is exact when every request's context is at least W + sq_i - 1 (or all are shorter);
* lower bound: keys >= sq + min(sk - sq, W - 1) (min(a, w) + min(b, w) >= min(a + b, w) over
  the cached tokens); pairs >= that for decode (one query per request: pairs = keys), else
  R*f(sq/R) with f(n) = sum_{j=1..n} min(j, W) (convex, so the equal split is the minimum;
  a query sees at least the keys of a sequence that starts with its chunk).
"""

from __future__ import annotations

import msgspec
from msgspec import field
from msgspec.structs import replace

from perfreport.errors import ModelError
from perfreport.stats.iteration_formats import STAT_KEYS


class GroupStats(msgspec.Struct, frozen=True):
    """One group's sums (module doc): requests (None: the format does not say), sq, sk, sqsq,
    sqsk, and ``estimated``: {statistic without its group prefix: (low, high)} for the ones that
    are point estimates."""

    sq: int
    sk: int
    sqsq: int
    sqsk: int
    reqs: int | None
    estimated: dict = field(default_factory=dict)


class ChunkStats(msgspec.Struct, frozen=True):
    """The chunk statistics of one step: the prefill ("c") and decode ("g") groups."""

    prefill: GroupStats
    decode: GroupStats
    annotation: str = ""

    @property
    def estimated(self) -> dict:
        """{``c_sqsq``-style key: (low, high)} of every estimated statistic."""
        return {f"{p}_{k}": v for p, g in (("c", self.prefill), ("g", self.decode)) for k, v in g.estimated.items()}

    def by_key(self) -> dict[str, int]:
        """The eight statistics under their :data:`STAT_KEYS` names, in that order."""
        return {f"{p}_{k}": getattr(g, k) for p, g in (("c", self.prefill), ("g", self.decode)) for k in _SUMS}

    def decode_only(self) -> "ChunkStats":
        """The statistics with the prefill sums zeroed (a decode kernel does not run them)."""
        return replace(self, prefill=replace(self.prefill, sq=0, sk=0, sqsq=0, sqsk=0))


_SUMS = ("sq", "sk", "sqsq", "sqsk")


def chunk_stats(op) -> ChunkStats:
    """The :class:`ChunkStats` of the op's step, from ``perf_meta["iteration"]``.

    Raises :class:`ModelError` with the reason when no annotation contains the op or its
    format lacks statistics (e.g. vLLM native: no sk).
    """
    it = op.perf_meta.get("iteration")
    if not it:
        raise ModelError(f"{op.name}: no iteration annotation contains this op (chunk statistics unknown)")
    if it.get("missing"):
        raise ModelError(str(it["missing"]))
    try:
        sums = {k: int(it[k]) for k in STAT_KEYS}
    except (KeyError, TypeError, ValueError):
        raise ModelError(f"{op.name}: malformed iteration statistics") from None
    est = dict(it.get("estimated") or {})

    def group(p: str) -> GroupStats:
        return GroupStats(
            *(sums[f"{p}_{k}"] for k in _SUMS),
            reqs=it.get(f"{p}_reqs"),
            estimated={k[2:]: v for k, v in est.items() if k[:2] == f"{p}_"},
        )

    return ChunkStats(group("c"), group("g"), it.get("annotation", ""))


class WindowGroup(msgspec.Struct, frozen=True):
    """Keys read and (q, k) pairs of one group under a window: point, low, high."""

    keys: float
    keys_lo: float
    pairs: float
    pairs_lo: float
    full_keys: float
    full_pairs: float

    @property
    def exact(self) -> bool:
        return self.keys_lo == self.keys and self.pairs_lo == self.pairs


def _f(n: float, w: int) -> float:
    """sum_{j=1..n} min(j, w) for real n >= 0 (linear between integers is not needed: the
    value is only a lower bound, and the closed form is monotone and convex in n)."""
    if n <= w:
        return n * (n + 1) / 2
    return w * (w + 1) / 2 + (n - w) * w


def window_group(sq: int, sk: int, sqsq: int, sqsk: int, reqs: int | None, window: int, decode: bool) -> WindowGroup:
    """Keys and pairs of one group (see the module doc). ``reqs`` None: taken as sq (the
    most requests sq new tokens can be, which gives the largest window union)."""
    full_pairs = float(sqsk) if decode else sqsk - sqsq / 2
    if sq <= 0:
        return WindowGroup(0.0, 0.0, 0.0, 0.0, float(sk), max(full_pairs, 0.0))
    r = reqs if reqs else sq
    w = int(window)
    keys = float(min(sk, sq + r * (w - 1)))
    keys_lo = float(min(keys, sq + min(sk - sq, w - 1)))
    pairs = float(min(full_pairs, sq * w))
    if decode or r == sq:
        pairs_lo = min(pairs, keys_lo)
    else:
        pairs_lo = min(pairs, r * _f(sq / r, w))
    return WindowGroup(keys, keys_lo, pairs, pairs_lo, float(sk), full_pairs)


__all__ = ["ChunkStats", "GroupStats", "chunk_stats", "WindowGroup", "window_group"]
