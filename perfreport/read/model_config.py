"""``--model-config FILE``: sizes a trace does not record, from a Hugging Face ``config.json``.

Passes read :attr:`TraceTree.model_config` (a :class:`ModelConfig` or None) and write what an op
needs into its ``perf_meta``; models never read the file themselves. Field names follow the
Hugging Face ``transformers`` configs (``PretrainedConfig`` and the per-family configs, e.g.
``MixtralConfig.num_local_experts``, ``Qwen3MoeConfig.num_experts`` /
``moe_intermediate_size``, ``GptOssConfig.layer_types`` / ``sliding_window``). Multimodal
configs nest the language model under ``text_config`` (also ``llm_config``); that part is used.
"""

from __future__ import annotations

import json
import msgspec
from msgspec import field
from pathlib import Path
from typing import Any

from perfreport.errors import BadInput

_NESTED = ("text_config", "llm_config", "language_config")


class ModelConfig(msgspec.Struct, frozen=True):
    """The fields perfreport uses; None where the config does not give one."""

    source: str
    model_type: str | None = None
    hidden_size: int | None = None
    intermediate_size: int | None = None  # dense MLP
    moe_intermediate_size: int | None = None  # per expert
    num_experts: int | None = None
    num_experts_per_tok: int | None = None
    num_hidden_layers: int | None = None
    num_attention_heads: int | None = None
    num_key_value_heads: int | None = None
    head_dim: int | None = None
    sliding_window: int | None = None
    layer_types: tuple[str, ...] | None = None  # e.g. ("sliding_attention", "full_attention", ...)
    quantization: dict[str, Any] = field(default_factory=dict)

    @property
    def expert_intermediate_size(self) -> int | None:
        """Per-expert intermediate size: ``moe_intermediate_size``, else ``intermediate_size``."""
        return self.moe_intermediate_size or self.intermediate_size

    def layer_window(self, layer: int) -> int | None:
        """Sliding window of decoder layer ``layer`` (0-based), None for full attention.

        With ``layer_types`` the type of that layer decides; without it a set ``sliding_window``
        applies to every layer (Mistral-style), unless ``use_sliding_window`` was false.
        """
        if self.sliding_window is None:
            return None
        if self.layer_types:
            t = self.layer_types[layer % len(self.layer_types)]
            return self.sliding_window if "sliding" in t else None
        return self.sliding_window


MAX_BYTES = 16 << 20  # a config.json is a few KB; larger is another file
MAX_SIZE = 1 << 40  # beyond any layer, head or expert count or width


def _int(d: dict, *keys: str) -> int | None:
    """The first of ``keys`` the config gives: a positive whole number (0 and null: not given).
    A value of another kind (a string, a negative or fractional number, true/false) is a
    :class:`_Bad` naming the field: a config that says something impossible is not guessed at."""
    for k in keys:
        v = d.get(k)
        if v is None or (v == 0 and not isinstance(v, bool)):
            continue
        if isinstance(v, float) and v.is_integer():
            v = int(v)
        if isinstance(v, bool) or not isinstance(v, int):
            raise _Bad(f"{k} must be a whole number, not {v!r}")
        if v < 0 or v > MAX_SIZE:
            raise _Bad(f"{k} must be a positive whole number, not {v}")
        return v
    return None


class _Bad(ValueError):
    """One field's problem (collected, then one BadInput line for all of them)."""


def parse_model_config(doc: Any, source: str) -> ModelConfig:
    """Build a :class:`ModelConfig` from a decoded ``config.json`` document."""
    if not isinstance(doc, dict):
        raise BadInput(source, "model config is not a JSON object (expected a Hugging Face config.json)")
    d = dict(doc)
    for k in _NESTED:
        sub = d.get(k)
        if isinstance(sub, dict):
            d = {**d, **sub}
    lt = d.get("layer_types")
    layer_types = tuple(str(x) for x in lt) if isinstance(lt, list) and lt else None
    try:
        window = _int(d, "sliding_window")
    except _Bad as exc:
        raise BadInput(source, f"model config: {exc}") from None
    if d.get("use_sliding_window") is False and not layer_types:
        window = None
    q = d.get("quantization_config")
    problems: list[str] = []

    def field_(*keys: str) -> int | None:
        try:
            return _int(d, *keys)
        except _Bad as exc:
            problems.append(str(exc))
            return None

    cfg = ModelConfig(
        source=source,
        model_type=str(d["model_type"]) if isinstance(d.get("model_type"), str) else None,
        hidden_size=field_("hidden_size", "d_model"),
        intermediate_size=field_("intermediate_size", "ffn_hidden_size"),
        moe_intermediate_size=field_("moe_intermediate_size", "expert_intermediate_size"),
        num_experts=field_("num_local_experts", "num_experts", "n_routed_experts"),
        num_experts_per_tok=field_("num_experts_per_tok", "moe_topk", "top_k"),
        num_hidden_layers=field_("num_hidden_layers", "n_layer"),
        num_attention_heads=field_("num_attention_heads", "n_head"),
        num_key_value_heads=field_("num_key_value_heads"),
        head_dim=field_("head_dim"),
        sliding_window=window,
        layer_types=layer_types,
        quantization=dict(q) if isinstance(q, dict) else {},
    )
    e, k = cfg.num_experts, cfg.num_experts_per_tok
    if e is not None and k is not None and k > e:
        problems.append(f"{k} experts per token is more than the {e} experts")
    h, kv = cfg.num_attention_heads, cfg.num_key_value_heads
    if h is not None and kv is not None and h % kv:
        problems.append(f"num_attention_heads {h} is not a multiple of num_key_value_heads {kv}")
    if problems:
        raise BadInput(source, "model config: " + "; ".join(problems))
    if cfg.hidden_size is None:
        raise BadInput(source, "model config has no hidden_size (is this a Hugging Face config.json?)")
    return cfg


def load_model_config(path: str | Path) -> ModelConfig:
    """Read ``path`` (a ``config.json``); problems are :class:`BadInput` naming the file."""
    p = str(path)
    try:
        with open(p, "rb") as fh:
            raw = fh.read(MAX_BYTES + 1)
    except OSError as exc:
        raise BadInput(p, f"cannot read model config: {exc.strerror or exc}") from None
    if len(raw) > MAX_BYTES:
        raise BadInput(p, f"model config is larger than {MAX_BYTES >> 20} MiB (a config.json is a few KB)")
    try:
        doc = json.loads(raw)
    except (ValueError, RecursionError) as exc:
        raise BadInput(p, f"model config is not valid JSON ({exc})") from None
    return parse_model_config(doc, p)


__all__ = ["ModelConfig", "load_model_config", "parse_model_config"]
