"""THE op registry: op name -> perf model class and category.

Lookup order for an op name:
1. ``MODELS`` exact name;
2. ``MODEL_PATTERNS`` (first regex that matches the whole name);
3. no model: ``category_of`` falls back to ``CATEGORY_PATTERNS`` and then ``"other"``.

An op whose ``perf_meta["exclude_perf_model"]`` is true counts as having no perf model
(see :func:`model_for_op`).

Users add models without editing the package with ``perfreport analyze --models FILE.py``:
the file is executed as a module and may call :func:`register` (see docs/models.md).
"""
from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from typing import Any, Mapping

from perfreport.errors import BadInput
from perfreport.models.base import PerfModel

# ---------------------------------------------------------------------------------
# exact names -> model class   (filled by the model families below)
# ---------------------------------------------------------------------------------
MODELS: dict[str, type[PerfModel]] = {}

# (compiled regex, model class), tried in order after MODELS
MODEL_PATTERNS: list[tuple[re.Pattern[str], type[PerfModel]]] = []

# categories for ops that have no model: (regex, category), first match wins
CATEGORY_PATTERNS: list[tuple[re.Pattern[str], str]] = []


def register(name: str | None = None, *, pattern: str | None = None):
    """Class decorator / function registering ``cls`` for an exact ``name`` or a ``pattern``."""

    def deco(cls: type[PerfModel]) -> type[PerfModel]:
        if name is not None:
            MODELS[name] = cls
        if pattern is not None:
            MODEL_PATTERNS.append((re.compile(pattern), cls))
        return cls

    return deco


def model_for(name: str) -> type[PerfModel] | None:
    cls = MODELS.get(name)
    if cls is not None:
        return cls
    for rx, cls in MODEL_PATTERNS:
        if rx.fullmatch(name):
            return cls
    return None


def model_for_op(name: str, perf_meta: Mapping[str, Any] | None) -> type[PerfModel] | None:
    """Model class for an op event, honouring ``perf_meta.exclude_perf_model``."""
    if perf_meta and perf_meta.get("exclude_perf_model"):
        return None
    return model_for(name)


def category_of(name: str) -> str:
    cls = model_for(name)
    if cls is not None:
        return cls.category
    for rx, cat in CATEGORY_PATTERNS:
        if rx.fullmatch(name):
            return cat
    return "other"


def load_user_models(path: str | Path) -> None:
    """Execute a user's ``--models FILE.py``; it registers classes with :func:`register`."""
    p = Path(path)
    if not p.is_file():
        raise BadInput(str(p), "models file not found")
    spec = importlib.util.spec_from_file_location(f"perfreport_user_models_{p.stem}", p)
    if spec is None or spec.loader is None:
        raise BadInput(str(p), "not a Python file")
    mod = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(mod)
    except Exception as exc:  # user code: report in one line
        raise BadInput(str(p), f"models file failed to load: {type(exc).__name__}: {exc}") from None


# ---------------------------------------------------------------------------------
# The table. Each family's module defines classes; the mapping lives HERE so a reader
# finds any op's model in this one file.
# ---------------------------------------------------------------------------------
def _install() -> None:
    # == GEMM / attention / elementwise / norms / conv / reduce / rope (issue 3) ==
    # (filled in by the model families)

    # == inference attention (issue 4) ==
    # _rocm_C::paged_attention has no model: its parent carries it (KCache_dtype pass).
    from perfreport.models import inference_attention as ia
    MODELS["vllm::unified_attention_with_output"] = ia.VllmUnifiedAttention
    MODELS["aiter::paged_attention_v1"] = ia.AiterPagedAttentionV1
    MODELS["perfreport::paged_attention_decode"] = ia.PerfreportPagedAttentionDecode
    MODEL_PATTERNS.append((re.compile(r"sglang_profiler::attention_paged_attention_ragged(_\d+)?"),
                           ia.SglangPagedAttentionRagged))
    pass


_install()
