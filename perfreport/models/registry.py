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
from perfreport.models.backward import BackwardOfForward
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
    try:
        spec.loader.exec_module(mod)
    except (Exception, SystemExit) as exc:  # user code: report in one line (exit() too)
        raise BadInput(str(p), f"models file failed to load: {type(exc).__name__}: {exc}") from None


# ---------------------------------------------------------------------------------
# The table. Each family's module defines classes; the mapping lives HERE so a reader
# finds any op's model in this one file.
# ---------------------------------------------------------------------------------
def _install() -> None:
    # == GEMM / attention / elementwise / norms / conv / reduce / rope ==
    # Composite ops that launch no kernel of their own are deliberately NOT modelled:
    # aten::linear / aten::matmul (-> addmm / mm / bmm), aten::scaled_dot_product_attention
    # (-> _scaled_dot_product_*_attention), aten::contiguous / clone (-> copy_). The op
    # that owns the kernels carries the same shapes, so each GEMM/attention gets one row.
    from perfreport.models import activation as act, conv, elementwise as ew, gemm
    from perfreport.models import norms, reduce as red, rope
    from perfreport.models.attention import sdpa

    def put(cls, *names: str) -> None:
        for n in names:
            MODELS[n] = cls

    # -- GEMM (gemm.py) ------------------------------------------------------------
    put(gemm.Mm, "aten::mm")
    put(gemm.Addmm, "aten::addmm", "aten::_addmm_activation")
    put(gemm.Bmm, "aten::bmm")
    put(gemm.Baddbmm, "aten::baddbmm")
    put(gemm.ScaledMm, "aten::_scaled_mm")
    put(gemm.RocmUnquantizedGemm, "vllm::rocm_unquantized_gemm")
    put(gemm.AiterGemmA16W16, "aiter::gemm_a16w16")
    put(gemm.CutlassScaledMm, "_C::cutlass_scaled_mm")
    # -- attention (sdpa.py) ---------------------------------------------------------
    put(sdpa.SdpaFlash, "aten::_scaled_dot_product_flash_attention")
    put(sdpa.SdpaEfficient, "aten::_scaled_dot_product_efficient_attention")
    put(sdpa.SdpaCudnn, "aten::_scaled_dot_product_cudnn_attention")
    put(sdpa.SdpaOverrideable, "aten::_scaled_dot_product_fused_attention_overrideable")
    put(sdpa.FlashAttentionForward, "aten::_flash_attention_forward")
    put(sdpa.EfficientAttentionForward, "aten::_efficient_attention_forward")
    put(sdpa.FlashAttnForward, "flash_attn::_flash_attn_forward")
    put(sdpa.FlashAttnVarlenForward, "flash_attn::_flash_attn_varlen_forward")
    put(sdpa.SdpaFlashBackward, "aten::_scaled_dot_product_flash_attention_backward")
    put(sdpa.SdpaEfficientBackward, "aten::_scaled_dot_product_efficient_attention_backward")
    put(sdpa.SdpaCudnnBackward, "aten::_scaled_dot_product_cudnn_attention_backward")
    put(sdpa.FlashAttentionBackward, "aten::_flash_attention_backward")
    put(sdpa.EfficientAttentionBackward, "aten::_efficient_attention_backward")
    put(sdpa.FlashAttnBackward, "flash_attn::_flash_attn_backward")
    put(sdpa.FlashAttnVarlenBackward, "flash_attn::_flash_attn_varlen_backward")
    # -- convolution (conv.py) ---------------------------------------------------------
    put(conv.Conv, "aten::convolution", "aten::_convolution")
    put(conv.ConvNd, "aten::conv1d", "aten::conv2d", "aten::conv3d")
    put(conv.CudnnConv, "aten::cudnn_convolution")
    put(conv.MiopenConv, "aten::miopen_convolution")
    put(conv.ConvBackward, "aten::convolution_backward")
    # -- elementwise (elementwise.py); in-place "op_" variants share the model ---------
    unary = (
        "abs neg exp exp2 expm1 log log2 log10 log1p sqrt rsqrt reciprocal square sin cos "
        "tan asin acos atan sinh cosh tanh sigmoid silu gelu relu leaky_relu elu selu celu "
        "mish softplus hardswish hardsigmoid hardtanh erf erfc erfinv sign sgn floor ceil "
        "round trunc frac bitwise_not logical_not isnan isinf isfinite nan_to_num clamp "
        "clamp_min clamp_max threshold"
    )
    binary = (
        "add sub rsub mul div true_divide floor_divide remainder fmod maximum minimum "
        "pow atan2 hypot eq ne lt le gt ge logical_and logical_or logical_xor bitwise_and "
        "bitwise_or bitwise_xor masked_fill silu_backward gelu_backward "
        "threshold_backward sigmoid_backward tanh_backward"
    )
    ternary = "where addcmul addcdiv lerp"
    for names, cls in ((unary, ew.UnaryElementwise), (binary, ew.BinaryElementwise), (ternary, ew.TernaryElementwise)):
        for n in names.split():
            put(cls, f"aten::{n}", f"aten::{n}_")
    put(ew.Copy, "aten::copy_")
    put(ew.ToCopy, "aten::_to_copy")
    put(ew.To, "aten::to")
    # -- fused gated activations (activation.py) ---------------------------------------
    for ns in ("_C", "sgl_kernel", "aiter"):
        put(act.SiluAndMul, f"{ns}::silu_and_mul")
        put(act.GeluAndMul, f"{ns}::gelu_and_mul")
        put(act.GeluTanhAndMul, f"{ns}::gelu_tanh_and_mul")
    # -- reductions / softmax (reduce.py) -------------------------------------------------
    for n in (
        "sum mean prod nansum amax amin max min argmax argmin any all var std logsumexp norm linalg_vector_norm"
    ).split():
        put(red.Reduce, f"aten::{n}")
    put(red.Scan, "aten::cumsum", "aten::cumprod")
    put(red.Softmax, "aten::_softmax", "aten::softmax", "aten::_log_softmax", "aten::log_softmax")
    # -- norms (norms.py) -----------------------------------------------------------------
    put(norms.AtenRMSNorm, "aten::rms_norm", "aten::_fused_rms_norm")
    put(norms.RMSNormOutFirst, "_C::rms_norm", "sgl_kernel::rmsnorm", "aiter::rmsnorm", "_C::rms_norm_static_fp8_quant")
    put(norms.RMSNormInputFirst, "aiter::rms_norm", "aiter::rmsnorm2d_fwd", "vllm::rocm_aiter_rms_norm")
    put(
        norms.FusedAddRMSNormInplace,
        "_C::fused_add_rms_norm",
        "sgl_kernel::fused_add_rmsnorm",
        "vllm::rocm_aiter_rmsnorm2d_fwd_with_add",
    )
    put(
        norms.FusedAddRMSNormOut,
        "aiter::add_rmsnorm",
        "aiter::rmsnorm2d_fwd_with_add",
        "aiter::rmsnorm2d_fwd_with_add_ck",
    )
    put(norms.FusedAddRMSNormQuant, "_C::fused_add_rms_norm_static_fp8_quant")
    put(norms.LayerNorm, "aten::layer_norm", "aten::native_layer_norm")
    put(norms.GroupNorm, "aten::group_norm", "aten::native_group_norm")
    put(
        norms.BatchNorm,
        "aten::batch_norm",
        "aten::native_batch_norm",
        "aten::cudnn_batch_norm",
        "aten::miopen_batch_norm",
        "aten::_native_batch_norm_legit",
        "aten::_native_batch_norm_legit_no_training",
    )
    put(
        norms.NormBackward,
        "aten::native_layer_norm_backward",
        "aten::native_group_norm_backward",
        "aten::native_batch_norm_backward",
        "aten::_fused_rms_norm_backward",
    )
    # -- rotary embedding (rope.py) -------------------------------------------------------
    put(
        rope.RotaryEmbedding,
        "_C::rotary_embedding",
        "sgl_kernel::rotary_embedding",
        "_C::batched_rotary_embedding",
        "vllm::rotary_embedding",
    )

    # -- categories for ops WITHOUT a model (first match wins; else "other") -------------
    # GEMM: composite/other matmuls and any vendor op with "gemm" in its name.
    # comm: collectives. memcpy: data movement, fills, gathers/scatters, concatenation.
    # elementwise / reduce: Inductor pointwise (triton_poi_) / reduction (triton_red_,
    # triton_per_) kernels' ops, foreach ops, other aten pointwise/reduction ops.
    for rx, cat in (
        (
            r"aten::(linear|matmul|einsum|addbmm|addmv|mv|dot|vdot|outer|tensordot|_int_mm)"
            r"|.*gemm.*|.*::.*_mm",
            "GEMM",
        ),
        (
            r"record_param_comms|nccl:.*|(c10d|_c10d_functional|c10d_functional|nccl|rccl)::.*"
            r"|.*(all_reduce|allreduce|all_gather|allgather|reduce_scatter|all_to_all|alltoall).*",
            "comm",
        ),
        (
            r"Memcpy.*|Memset.*|aten::(clone|contiguous|cat|stack|index|index_select|gather"
            r"|scatter|scatter_|scatter_add_?|index_put_?|index_copy_?|_index_put_impl_|embedding"
            r"|fill_|zero_|zeros|ones|full|zeros_like|ones_like|full_like|arange|repeat"
            r"|repeat_interleave|flip|roll|narrow_copy|_foreach_copy_|constant_pad_nd|pad"
            r"|masked_select|nonzero|_copy_from|_copy_from_and_resize|take|put_)",
            "memcpy",
        ),
        (
            r"triton_poi_.*|aten::_foreach_.*|aten::(dropout|native_dropout|bernoulli_?|uniform_"
            r"|normal_|exponential_|rand|randn|randint|rand_like|randn_like|clamp_min_"
            r"|mish_backward|hardswish_backward|elu_backward|leaky_relu_backward|softplus_backward)",
            "elementwise",
        ),
        (
            r"triton_(red|per)_.*|aten::(topk|sort|argsort|cummax|cummin|median|mode|kthvalue"
            r"|unique.*|_unique2|bincount|histc|_softmax_backward_data|_log_softmax_backward_data"
            r"|nll_loss.*|cross_entropy_loss)",
            "reduce",
        ),
    ):
        CATEGORY_PATTERNS.append((re.compile(rx), cat))

    # == inference attention ==
    # _rocm_C::paged_attention has no model: its parent carries it (KCache_dtype pass).
    from perfreport.models.attention import engine_ops as ia

    MODELS["vllm::unified_attention_with_output"] = ia.VllmUnifiedAttention
    MODELS["aiter::paged_attention_v1"] = ia.AiterPagedAttentionV1
    MODELS["perfreport::paged_attention_decode"] = ia.PerfreportPagedAttentionDecode
    MODEL_PATTERNS.append(
        (re.compile(r"sglang_profiler::attention_paged_attention_ragged(_\d+)?"), ia.SglangPagedAttentionRagged)
    )
    MODELS["aiter::paged_attention_ragged"] = ia.AiterPagedAttentionRagged
    # varlen / paged prefill on the step's chunk statistics (attention/prefill.py)
    from perfreport.models.attention import prefill as ap

    MODELS["aiter::mha_varlen_fwd"] = ap.AiterMhaVarlenFwd
    MODELS["aiter::fmha_v3_varlen_fwd"] = ap.AiterFmhaV3VarlenFwd
    MODELS["aiter::mha_batch_prefill"] = ap.AiterMhaBatchPrefill
    # MLA decode in latent dims (attention/mla.py)
    from perfreport.models.attention import mla

    MODELS["aiter::mla_decode_stage1_asm_fwd"] = mla.AiterMlaDecode
    put(mla.CutlassMlaDecode, "_C::cutlass_mla_decode", "sgl_kernel::cutlass_mla_decode")
    put(mla.Sm100CutlassMlaDecode, "_C::sm100_cutlass_mla_decode")
    # FlashInfer batch decode, one op per compiled variant (attention/flashinfer_decode.py)
    from perfreport.models.attention import flashinfer_decode as fi

    MODEL_PATTERNS.append((re.compile(fi.BATCH_DECODE_RUN), fi.FlashInferBatchDecode))
    MODEL_PATTERNS.append((re.compile(fi.BATCH_DECODE_RUN_V020), fi.FlashInferBatchDecodeV020))
    # FlashInfer batch prefill, ragged K/V and paged cache (attention/flashinfer_[paged_]prefill.py)
    from perfreport.models.attention import flashinfer_paged_prefill as fipp
    from perfreport.models.attention import flashinfer_prefill as fip
    from perfreport.models.attention import flashinfer_names as fin

    for rx, cls in (
        (fin.RAGGED_RUN, fip.FlashInferRaggedPrefill),
        (fin.PAGED_RUN, fipp.FlashInferPagedPrefill),
        (fin.RAGGED_RUN_AOT, fip.FlashInferRaggedPrefill),
        (fin.PAGED_RUN_AOT, fipp.FlashInferPagedPrefill),
        (fin.RAGGED_RUN_V020, fip.FlashInferRaggedPrefillV020),
        (fin.PAGED_RUN_V020, fipp.FlashInferPagedPrefillV020),
    ):
        MODEL_PATTERNS.append((re.compile(rx), cls))
    # FlashMLA decode as vLLM registers it (attention/flashmla.py)
    from perfreport.models.attention import flashmla as fmla

    put(fmla.FlashMlaDecode, "_flashmla_C::fwd_kvcache_mla", "_flashmla_C::dense_decode_fwd")
    put(fmla.FlashMlaDecodeFp8, "_flashmla_extension_C::fwd_kvcache_mla_fp8")
    # == mixture of experts (models/moe/) ==
    from perfreport.models.moe import experts as moe
    from perfreport.models.moe import routing as mr
    from perfreport.models.moe import vendor as mv

    put(moe.VllmMoeForward, "vllm::moe_forward", "vllm::moe_forward_shared")
    put(
        moe.FusedExperts,
        "vllm::inplace_fused_experts",
        "vllm::outplace_fused_experts",
        "sglang::inplace_fused_experts",
        "sglang::outplace_fused_experts",
        "aiter::fused_moe_",
        "aiter::ck_moe",
        "vllm::rocm_aiter_fused_moe",
    )
    put(mv.AiterCkMoeStage, "aiter::ck_moe_stage1", "aiter::ck_moe_stage2")
    put(mv.CutlassMoeMm, "_C::cutlass_moe_mm")
    put(
        mv.AiterFmoe,
        "aiter::fmoe",
        "aiter::fmoe_g1u1",
        "aiter::fmoe_int8_g1u0",
        "aiter::fmoe_g1u1_a16",
        "aiter::fmoe_int8_g1u0_a16",
        "aiter::fmoe_fp8_g1u1_a16",
        "aiter::fmoe_fp8_blockscale_g1u1",
    )
    put(mr.TritonTopK, "TopK")
    put(mr.TritonSortTokens, "SortTokens")
    put(mr.TopkSoftmax, "_moe_C::topk_softmax", "aiter::topk_softmax", "vllm::rocm_aiter_topk_softmax")
    put(mr.SglTopkSoftmax, "sgl_kernel::topk_softmax")
    put(
        mr.AlignBlockSize,
        "_moe_C::moe_align_block_size",
        "sgl_kernel::moe_align_block_size",
        "aiter::moe_align_block_size",
        "aiter::moe_sorting_fwd",
    )
    # == KV-cache writes, quantization, Inductor kernels, pooling/resampling ==
    from perfreport.models import inductor, kv_cache, pooling, quant

    put(
        kv_cache.KVCacheWrite,
        "_C_cache_ops::reshape_and_cache",
        "_C_cache_ops::reshape_and_cache_flash",
        "_C_cache_ops::concat_and_cache_mla",
        "sglang::store_cache",
    )
    put(
        quant.StaticQuant,
        "_C::static_scaled_fp8_quant",
        "_C::static_scaled_int8_quant",
        "aiter::static_per_tensor_quant",
    )
    put(quant.DynamicTensorQuant, "_C::dynamic_scaled_fp8_quant", "aiter::dynamic_per_tensor_quant")
    put(
        quant.DynamicTokenQuant,
        "_C::dynamic_per_token_scaled_fp8_quant",
        "_C::dynamic_scaled_int8_quant",
        "_C::per_token_group_fp8_quant",
        "_C::scaled_fp4_quant",
        "aiter::dynamic_per_token_scaled_quant",
        "sgl_kernel::sgl_per_token_quant_fp8",
        "sgl_kernel::sgl_per_token_group_quant_fp8",
    )
    MODEL_PATTERNS.append((re.compile(r"triton_(poi|red|per|tem)_.*"), inductor.InductorKernel))
    for nd in (1, 2, 3):
        put(pooling.MaxPoolWithIndices, f"aten::max_pool{nd}d_with_indices")
        put(pooling.MaxPoolWithIndicesBackward, f"aten::max_pool{nd}d_with_indices_backward")
        put(pooling.UpsampleNearest, f"aten::upsample_nearest{nd}d", f"aten::_upsample_nearest_exact{nd}d")
        put(
            pooling.UpsampleNearestBackward,
            f"aten::upsample_nearest{nd}d_backward",
            f"aten::_upsample_nearest_exact{nd}d_backward",
        )
    # -- data movement (data_movement.py) --------------------------------------------------
    from perfreport.models import data_movement as dm

    put(dm.Concat, "aten::cat", "aten::stack", "aten::_cat", "aten::concat", "aten::concatenate")
    put(dm.IndexSelect, "aten::index_select")
    put(norms.AiterGroupNorm, "aiter::_groupnorm_run")
    put(norms.MiopenBatchNormBackward, "aten::miopen_batch_norm_backward", "aten::cudnn_batch_norm_backward")

    # == autograd backward nodes (XBackward0) ==
    # backward.py imports no registry: it resolves the forward op's model through this hook
    BackwardOfForward.resolve_forward = staticmethod(model_for)
    # Not by name: the "backward link" pass gives a node perf_meta.forward (its forward op's
    # name and args, matched by Sequence number) when models/backward.py has a rule for that
    # forward; model_for_op() then returns backward.BackwardOfForward (GEMM_bwd, SDPA_bwd).


_install()
