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
import sys
from pathlib import Path
from typing import Any, Mapping

from perfreport.errors import BadInput
from perfreport.models import activation as act
from perfreport.models import conv, gemm, inductor, kv_cache, norms, pooling, quant, rope
from perfreport.models import data_movement as dm
from perfreport.models import elementwise as ew
from perfreport.models import reduce as red
from perfreport.models.attention import engine_ops as ia
from perfreport.models.attention import flashinfer_decode as fi
from perfreport.models.attention import flashinfer_names as fin
from perfreport.models.attention import flashinfer_paged_prefill as fipp
from perfreport.models.attention import flashinfer_prefill as fip
from perfreport.models.attention import flashmla as fmla
from perfreport.models.attention import mla, sdpa
from perfreport.models.attention import prefill as ap
from perfreport.models.backward import BackwardOfForward
from perfreport.models.base import PerfModel
from perfreport.models.categories import CATEGORIES
from perfreport.models.moe import experts as moe
from perfreport.models.moe import routing as mr
from perfreport.models.moe import vendor as mv

# ---------------------------------------------------------------------------------
# exact names -> model class   (filled by the model families below)
# ---------------------------------------------------------------------------------
MODELS: dict[str, type[PerfModel]] = {}

# (compiled regex, model class), tried in order after MODELS
MODEL_PATTERNS: list[tuple[re.Pattern[str], type[PerfModel]]] = []

# categories for ops that have no model: (regex, category), first match wins (models/categories.py)
CATEGORY_PATTERNS: list[tuple[re.Pattern[str], str]] = [(re.compile(rx), cat) for rx, cat in CATEGORIES]


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
    if perf_meta:
        if perf_meta.get("exclude_perf_model"):
            return None
        if perf_meta.get("forward") is not None:  # autograd node linked by "backward link"
            return BackwardOfForward
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
    # nothing written beside the user's file (the import would leave __pycache__/FILE.pyc there)
    was, sys.dont_write_bytecode = sys.dont_write_bytecode, True
    try:
        spec.loader.exec_module(mod)
    except (Exception, SystemExit) as exc:  # user code: report in one line (exit() too)
        raise BadInput(str(p), f"models file failed to load: {type(exc).__name__}: {exc}") from None
    finally:
        sys.dont_write_bytecode = was


# ---------------------------------------------------------------------------------
# The table: (model class, op names...) for exact names, (regex, model class) for patterns.
# Each family's module defines the classes; the mapping lives HERE so a reader finds any
# op's model in this one file. A new op is one line.
# Composite ops that launch no kernel of their own are deliberately NOT modelled:
# aten::linear / aten::matmul (-> addmm / mm / bmm), aten::scaled_dot_product_attention
# (-> _scaled_dot_product_*_attention), aten::contiguous / clone (-> copy_). The op that
# owns the kernels carries the same shapes, so each GEMM/attention gets one row.
# _rocm_C::paged_attention has no model: its parent carries it (KCache_dtype pass).
# ---------------------------------------------------------------------------------
_UNARY = (
    "abs neg exp exp2 expm1 log log2 log10 log1p sqrt rsqrt reciprocal square sin cos "
    "tan asin acos atan sinh cosh tanh sigmoid silu gelu relu leaky_relu elu selu celu "
    "mish softplus hardswish hardsigmoid hardtanh erf erfc erfinv sign sgn floor ceil "
    "round trunc frac bitwise_not logical_not isnan isinf isfinite nan_to_num clamp "
    "clamp_min clamp_max threshold"
)
_BINARY = (
    "add sub rsub mul div true_divide floor_divide remainder fmod maximum minimum "
    "pow atan2 hypot eq ne lt le gt ge logical_and logical_or logical_xor bitwise_and "
    "bitwise_or bitwise_xor masked_fill silu_backward gelu_backward "
    "threshold_backward sigmoid_backward tanh_backward"
)
_TERNARY = "where addcmul addcdiv lerp"
_REDUCE = "sum mean prod nansum amax amin max min argmax argmin any all var std logsumexp norm linalg_vector_norm"
_ND = (1, 2, 3)


def _aten(words: str, inplace: bool = False) -> tuple[str, ...]:
    """``aten::<w>`` for each word (and its in-place ``aten::<w>_`` variant)."""
    return tuple(n for w in words.split() for n in ((f"aten::{w}", f"aten::{w}_") if inplace else (f"aten::{w}",)))


EXACT: list[tuple] = [
    # -- GEMM (gemm.py)
    (gemm.Mm, "aten::mm"),
    (gemm.Addmm, "aten::addmm", "aten::_addmm_activation"),
    (gemm.Bmm, "aten::bmm"),
    (gemm.Baddbmm, "aten::baddbmm"),
    (gemm.ScaledMm, "aten::_scaled_mm"),
    (gemm.RocmUnquantizedGemm, "vllm::rocm_unquantized_gemm"),
    (gemm.AiterGemmA16W16, "aiter::gemm_a16w16"),
    (gemm.CutlassScaledMm, "_C::cutlass_scaled_mm"),
    # -- attention (attention/sdpa.py)
    (sdpa.SdpaFlash, "aten::_scaled_dot_product_flash_attention"),
    (sdpa.SdpaEfficient, "aten::_scaled_dot_product_efficient_attention"),
    (sdpa.SdpaCudnn, "aten::_scaled_dot_product_cudnn_attention"),
    (sdpa.SdpaOverrideable, "aten::_scaled_dot_product_fused_attention_overrideable"),
    (sdpa.FlashAttentionForward, "aten::_flash_attention_forward"),
    (sdpa.EfficientAttentionForward, "aten::_efficient_attention_forward"),
    (sdpa.FlashAttnForward, "flash_attn::_flash_attn_forward"),
    (sdpa.FlashAttnVarlenForward, "flash_attn::_flash_attn_varlen_forward"),
    (sdpa.SdpaFlashBackward, "aten::_scaled_dot_product_flash_attention_backward"),
    (sdpa.SdpaEfficientBackward, "aten::_scaled_dot_product_efficient_attention_backward"),
    (sdpa.SdpaCudnnBackward, "aten::_scaled_dot_product_cudnn_attention_backward"),
    (sdpa.FlashAttentionBackward, "aten::_flash_attention_backward"),
    (sdpa.EfficientAttentionBackward, "aten::_efficient_attention_backward"),
    (sdpa.FlashAttnBackward, "flash_attn::_flash_attn_backward"),
    (sdpa.FlashAttnVarlenBackward, "flash_attn::_flash_attn_varlen_backward"),
    # -- convolution (conv.py)
    (conv.Conv, "aten::convolution", "aten::_convolution"),
    (conv.ConvNd, "aten::conv1d", "aten::conv2d", "aten::conv3d"),
    (conv.CudnnConv, "aten::cudnn_convolution"),
    (conv.MiopenConv, "aten::miopen_convolution"),
    (conv.ConvBackward, "aten::convolution_backward"),
    # -- elementwise (elementwise.py); in-place "op_" variants share the model
    (ew.UnaryElementwise, *_aten(_UNARY, inplace=True)),
    (ew.BinaryElementwise, *_aten(_BINARY, inplace=True)),
    (ew.TernaryElementwise, *_aten(_TERNARY, inplace=True)),
    (ew.Copy, "aten::copy_"),
    (ew.ToCopy, "aten::_to_copy"),
    (ew.To, "aten::to"),
    # -- fused gated activations (activation.py), one op per library namespace
    *(
        entry
        for ns in ("_C", "sgl_kernel", "aiter")
        for entry in (
            (act.SiluAndMul, f"{ns}::silu_and_mul"),
            (act.GeluAndMul, f"{ns}::gelu_and_mul"),
            (act.GeluTanhAndMul, f"{ns}::gelu_tanh_and_mul"),
        )
    ),
    # -- reductions / softmax (reduce.py)
    (red.Reduce, *_aten(_REDUCE)),
    (red.Scan, "aten::cumsum", "aten::cumprod"),
    (red.Softmax, "aten::_softmax", "aten::softmax", "aten::_log_softmax", "aten::log_softmax"),
    # -- norms (norms.py)
    (norms.AtenRMSNorm, "aten::rms_norm", "aten::_fused_rms_norm"),
    (norms.RMSNormOutFirst, "_C::rms_norm", "sgl_kernel::rmsnorm", "aiter::rmsnorm", "_C::rms_norm_static_fp8_quant"),
    (norms.RMSNormInputFirst, "aiter::rms_norm", "aiter::rmsnorm2d_fwd", "vllm::rocm_aiter_rms_norm"),
    (
        norms.FusedAddRMSNormInplace,
        "_C::fused_add_rms_norm",
        "sgl_kernel::fused_add_rmsnorm",
        "vllm::rocm_aiter_rmsnorm2d_fwd_with_add",
    ),
    (
        norms.FusedAddRMSNormOut,
        "aiter::add_rmsnorm",
        "aiter::rmsnorm2d_fwd_with_add",
        "aiter::rmsnorm2d_fwd_with_add_ck",
    ),
    (norms.FusedAddRMSNormQuant, "_C::fused_add_rms_norm_static_fp8_quant"),
    (norms.LayerNorm, "aten::layer_norm", "aten::native_layer_norm"),
    (norms.GroupNorm, "aten::group_norm", "aten::native_group_norm"),
    (
        norms.BatchNorm,
        "aten::batch_norm",
        "aten::native_batch_norm",
        "aten::cudnn_batch_norm",
        "aten::miopen_batch_norm",
        "aten::_native_batch_norm_legit",
        "aten::_native_batch_norm_legit_no_training",
    ),
    (
        norms.NormBackward,
        "aten::native_layer_norm_backward",
        "aten::native_group_norm_backward",
        "aten::native_batch_norm_backward",
        "aten::_fused_rms_norm_backward",
    ),
    # -- rotary embedding (rope.py)
    (
        rope.RotaryEmbedding,
        "_C::rotary_embedding",
        "sgl_kernel::rotary_embedding",
        "_C::batched_rotary_embedding",
        "vllm::rotary_embedding",
    ),
    # -- inference attention (attention/engine_ops.py, prefill.py, mla.py, flashmla.py)
    (ia.VllmUnifiedAttention, "vllm::unified_attention_with_output"),
    (ia.AiterPagedAttentionV1, "aiter::paged_attention_v1"),
    (ia.PerfreportPagedAttentionDecode, "perfreport::paged_attention_decode"),
    (ia.AiterPagedAttentionRagged, "aiter::paged_attention_ragged"),
    (ap.AiterMhaVarlenFwd, "aiter::mha_varlen_fwd"),
    (ap.AiterFmhaV3VarlenFwd, "aiter::fmha_v3_varlen_fwd"),
    (ap.AiterMhaBatchPrefill, "aiter::mha_batch_prefill"),
    (mla.AiterMlaDecode, "aiter::mla_decode_stage1_asm_fwd"),
    (mla.CutlassMlaDecode, "_C::cutlass_mla_decode", "sgl_kernel::cutlass_mla_decode"),
    (mla.Sm100CutlassMlaDecode, "_C::sm100_cutlass_mla_decode"),
    (fmla.FlashMlaDecode, "_flashmla_C::fwd_kvcache_mla", "_flashmla_C::dense_decode_fwd"),
    (fmla.FlashMlaDecodeFp8, "_flashmla_extension_C::fwd_kvcache_mla_fp8"),
    # -- mixture of experts (moe/)
    (moe.VllmMoeForward, "vllm::moe_forward", "vllm::moe_forward_shared"),
    (
        moe.FusedExperts,
        "vllm::inplace_fused_experts",
        "vllm::outplace_fused_experts",
        "sglang::inplace_fused_experts",
        "sglang::outplace_fused_experts",
        "aiter::fused_moe_",
        "aiter::ck_moe",
        "vllm::rocm_aiter_fused_moe",
    ),
    (mv.AiterCkMoeStage, "aiter::ck_moe_stage1", "aiter::ck_moe_stage2"),
    (mv.CutlassMoeMm, "_C::cutlass_moe_mm"),
    (
        mv.AiterFmoe,
        "aiter::fmoe",
        "aiter::fmoe_g1u1",
        "aiter::fmoe_int8_g1u0",
        "aiter::fmoe_g1u1_a16",
        "aiter::fmoe_int8_g1u0_a16",
        "aiter::fmoe_fp8_g1u1_a16",
        "aiter::fmoe_fp8_blockscale_g1u1",
    ),
    (mr.TritonTopK, "TopK"),
    (mr.TritonSortTokens, "SortTokens"),
    (mr.TopkSoftmax, "_moe_C::topk_softmax", "aiter::topk_softmax", "vllm::rocm_aiter_topk_softmax"),
    (mr.SglTopkSoftmax, "sgl_kernel::topk_softmax"),
    (
        mr.AlignBlockSize,
        "_moe_C::moe_align_block_size",
        "sgl_kernel::moe_align_block_size",
        "aiter::moe_align_block_size",
        "aiter::moe_sorting_fwd",
    ),
    # -- KV-cache writes (kv_cache.py), quantization (quant.py)
    (
        kv_cache.KVCacheWrite,
        "_C_cache_ops::reshape_and_cache",
        "_C_cache_ops::reshape_and_cache_flash",
        "_C_cache_ops::concat_and_cache_mla",
        "sglang::store_cache",
    ),
    (
        quant.StaticQuant,
        "_C::static_scaled_fp8_quant",
        "_C::static_scaled_int8_quant",
        "aiter::static_per_tensor_quant",
    ),
    (quant.DynamicTensorQuant, "_C::dynamic_scaled_fp8_quant", "aiter::dynamic_per_tensor_quant"),
    (
        quant.DynamicTokenQuant,
        "_C::dynamic_per_token_scaled_fp8_quant",
        "_C::dynamic_scaled_int8_quant",
        "_C::per_token_group_fp8_quant",
        "_C::scaled_fp4_quant",
        "aiter::dynamic_per_token_scaled_quant",
        "sgl_kernel::sgl_per_token_quant_fp8",
        "sgl_kernel::sgl_per_token_group_quant_fp8",
    ),
    # -- pooling / resampling (pooling.py), per spatial rank
    *(
        entry
        for nd in _ND
        for entry in (
            (pooling.MaxPoolWithIndices, f"aten::max_pool{nd}d_with_indices"),
            (pooling.MaxPoolWithIndicesBackward, f"aten::max_pool{nd}d_with_indices_backward"),
            (pooling.UpsampleNearest, f"aten::upsample_nearest{nd}d", f"aten::_upsample_nearest_exact{nd}d"),
            (
                pooling.UpsampleNearestBackward,
                f"aten::upsample_nearest{nd}d_backward",
                f"aten::_upsample_nearest_exact{nd}d_backward",
            ),
        )
    ),
    # -- data movement (data_movement.py), vendor norms
    (dm.Concat, "aten::cat", "aten::stack", "aten::_cat", "aten::concat", "aten::concatenate"),
    (dm.IndexSelect, "aten::index_select"),
    (dm.Fill, "aten::fill_", "aten::zero_"),
    (norms.AiterGroupNorm, "aiter::_groupnorm_run"),
    (norms.MiopenBatchNormBackward, "aten::miopen_batch_norm_backward", "aten::cudnn_batch_norm_backward"),
]

PATTERNS: list[tuple[str, type[PerfModel]]] = [
    (r"sglang_profiler::attention_paged_attention_ragged(_\d+)?", ia.SglangPagedAttentionRagged),
    # FlashInfer batch decode / prefill, one op per compiled variant (attention/flashinfer_*.py)
    (fi.BATCH_DECODE_RUN, fi.FlashInferBatchDecode),
    (fi.BATCH_DECODE_RUN_V020, fi.FlashInferBatchDecodeV020),
    (fin.RAGGED_RUN, fip.FlashInferRaggedPrefill),
    (fin.PAGED_RUN, fipp.FlashInferPagedPrefill),
    (fin.RAGGED_RUN_AOT, fip.FlashInferRaggedPrefill),
    (fin.PAGED_RUN_AOT, fipp.FlashInferPagedPrefill),
    (fin.RAGGED_RUN_V020, fip.FlashInferRaggedPrefillV020),
    (fin.PAGED_RUN_V020, fipp.FlashInferPagedPrefillV020),
    # Inductor's generated Triton kernels (inductor.py)
    (r"triton_(poi|red|per|tem)_.*", inductor.InductorKernel),
]

for _cls, *_names in EXACT:
    for _n in _names:
        MODELS[_n] = _cls
MODEL_PATTERNS.extend((re.compile(rx), cls) for rx, cls in PATTERNS)

# == autograd backward nodes (XBackward0) ==
# backward.py imports no registry: it resolves the forward op's model through this hook.
# Not by name: the "backward link" pass gives a node perf_meta.forward (its forward op's
# name and args, matched by Sequence number) when models/backward.py has a rule for that
# forward; model_for_op() then returns backward.BackwardOfForward (GEMM_bwd, SDPA_bwd).
BackwardOfForward.resolve_forward = staticmethod(model_for)
