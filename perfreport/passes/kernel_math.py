"""Pass "kernel math": the arithmetic a GEMM / convolution / MoE op's kernels ran, from their names.

The recorded dtype of an FP32 GEMM does not say whether it ran on TF32 tensor cores or on FP32
CUDA cores (``torch.backends.cuda.matmul.allow_tf32`` / ``torch.backends.cudnn.allow_tf32``
decide, and are not recorded), and a block-scaled (MX) GEMM's operands are often recorded as
``unsigned char``. The kernel names say it. Every form accepted is in :data:`FORMS` with the
source that writes it (docs/models.md, "Kernel math", lists them; tests/passes/test_kernel_math.py
checks each example):

* ``tf32`` in the name (not ``3xtf32``, the FP32-emulation kernels at a third of the TF32 rate):
  cuBLAS / cuDNN XMMA kernels spell their operand and math types,
  ``sm80_xmma_fprop_implicit_gemm_indexed_tf32f32_tf32f32_f32_...`` (A/B type, math /
  accumulate type), cuDNN's ``xmma_new::...Ampere_hmma_tf32_traits``; CUTLASS 3.x names spell the
  math type (``cutlass3x_sm90_tensorop_..tf32gemm_f32_f32_...``).
* CUTLASS 2.x ``cutlass[_<cc>]_tensorop_s<instruction shape>gemm_<tile>...``: the name is
  ``cutlass_{opcode class}_{extended name}_{tile}_{layout}_align{n}``, the extended name
  ``[<C type>_]<accumulator letter><instruction shape>[<math type>]gemm[_<A type>]``, the A type
  spelled only when it differs from the accumulator (NVIDIA/cutlass
  python/cutlass_library/gemm_operation.py, ``GemmOperation.core_name`` / ``extended_name`` /
  ``procedural_name``). So a tensor-op GEMM with FP32 (``s``) accumulation and no A type before
  the tile, ``cutlass_80_tensorop_s1688gemm_128x128_32x3_nn_align4``, has FP32 operands on the
  tensor cores: TF32 math (the m16n8k8 TF32 ``mma``). ``cutlass_tensorop_s16816gemm_bf16_...``
  (BF16 operands) and ``cutlass_tensorop_f16_s1688gemm_f16_...`` (FP16) do not match.
* FP32 on CUDA cores (SIMT): cuBLAS ``<arch>_sgemm_*`` (``ampere_sgemm_128x64_nn``,
  ``volta_sgemm_128x32_nt``), CUTLASS ``cutlass[_<cc>]_simt_sgemm_*`` (opcode class ``simt``,
  gemm_operation.py as above), cuDNN ``*_scudnn_*``, ``implicit_convolve_sgemm``,
  ``explicit_convolve_sgemm`` -> ``fp32``.
* trtllm-gen batched GEMMs (TensorRT-LLM and FlashInfer's MoE):
  ``Bmm_<C>_<A><B>_<accumulator>_...`` (NVIDIA/TensorRT-LLM
  cpp/tensorrt_llm/kernels/trtllmGenKernels/batchedGemm/trtllmGen_bmm_export/KernelMetaInfo.h,
  e.g. ``Bmm_Bfloat16_E2m1E2m1_Fp32_t128x8x512_...``), types spelled as
  ``trtllm::gen::dtypeToString`` writes them (``.../trtllm/gen/DtypeDecl.h``, also in
  flashinfer-ai/flashinfer include/flashinfer/trtllm/batched_gemm/trtllmGen_bmm_export/): ``MxE4m3``
  (MXFP8), ``MxE2m1`` (MXFP4), ``E2m1`` (NVFP4), ``E4m3`` / ``E5m2`` (FP8), ``E2m3`` / ``E3m2``
  (FP6), ``Bfloat16``, ``Fp16``. The rate is the A x B pair's tensor-core kind (PTX ISA,
  ``tcgen05.mma`` kinds): two block-scaled 4-bit operands run at the FP4 rate (``kind::mxf4``,
  ``kind::mxf4nvf4``); any 8-, 6- or 4-bit pair otherwise at the FP8/FP6 rate
  (``kind::mxf8f6f4`` / ``kind::f8f6f4``: ``mxfp8`` when a block-scaled type is in it, else
  ``fp8`` / ``fp6``); a 16-bit operand puts the pair on the BF16/FP16 rate. The output type C
  does not set the rate.

Written to ``perf_meta["kernel_math"]`` (``tf32``, ``fp32``, ``mxfp8``, ``mxfp4``, ``nvfp4``,
``fp8``, ``fp6``, ``bf16``, ``fp16``) of the ops whose model needs it; an op whose kernels say
nothing, or disagree, gets nothing, and its model states the assumption.
"""

from __future__ import annotations

import re
from functools import lru_cache

from perfreport.passes import ops_needing, register_pass

_TF32 = re.compile(r"(?<!3x)tf32", re.I)
_CUTLASS_TF32 = re.compile(r"cutlass(?:_\d+)?_tensorop_s\d+gemm_\d+x\d+")
_SIMT = re.compile(
    r"(?:^|[_ ])(?:maxwell|pascal|volta|turing|ampere|ada|hopper|sm\d+)_sgemm_"
    r"|cutlass(?:_\d+)?_simt_sgemm_|_scudnn_|(?:implicit|explicit)_convolve_sgemm"
)
# trtllm::gen::dtypeToString spellings (DtypeDecl.h) -> format; longest first for the regex
_FMT = {
    "MxE4m3": "mxfp8",
    "MxE2m1": "mxfp4",
    "Bfloat16": "bf16",
    "E2m1": "nvfp4",
    "E2m3": "fp6",
    "E3m2": "fp6",
    "E4m3": "fp8",
    "E5m2": "fp8",
    "Fp16": "fp16",
    "Fp32": "fp32",
}
_T = "|".join(_FMT)
_BMM = re.compile(rf"\b[Bb]mm_(?:{_T})_({_T})({_T})_(?:Fp32|Fp16)_")
_BITS = {"mxfp4": 4, "nvfp4": 4, "fp6": 6, "mxfp8": 8, "fp8": 8, "bf16": 16, "fp16": 16, "fp32": 32}

# (math, an example name, where the form comes from): every accepted form, docs/models.md lists them
FORMS = (
    (
        "tf32",
        "sm80_xmma_fprop_implicit_gemm_indexed_tf32f32_tf32f32_f32_nhwckrsc_nchw_tilesize128x128x16_stage4",
        "cuDNN, as recorded in facebookresearch/HolisticTraceAnalysis "
        "tests/data/critical_path/end_to_end/simple_add/input/trace.json.gz (fixtures/corpus/hta)",
    ),
    (
        "tf32",
        "void xmma_new::gemm::kernel<xmma_new::implicit_gemm::fprop::Kernel_traits<"
        "xmma_new::Ampere_hmma_tf32_traits<unsigned int, float>",
        "cuDNN, as recorded in facebookresearch/HolisticTraceAnalysis "
        "tests/data/cupti_profiler/benchmark_result_924719_1679055439_trace.json.gz (fixtures/corpus/hta)",
    ),
    (
        "tf32",
        "void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_128x128_32x3_nn_align4>(Params)",
        "NVIDIA/cutlass python/cutlass_library/gemm_operation.py GemmOperation.procedural_name; "
        "recorded in facebookresearch/HolisticTraceAnalysis tests/data/call_stack/backward_thread.json (fixtures/corpus/hta)",
    ),
    (
        "tf32",
        "cutlass3x_sm90_tensorop_tf32gemm_f32_f32_f32_f32_f32_128x128x32_1x1x1_0_tnn_align4",
        "NVIDIA/cutlass python/cutlass_library/gemm_operation.py GemmOperation.extended_name_3x",
    ),
    (
        "fp32",
        "ampere_sgemm_128x64_nn",
        "cuBLAS, as recorded in facebookresearch/HolisticTraceAnalysis "
        "tests/data/critical_path/cuda_event_sync_multi_stream/event_sync_trace.json.gz (fixtures/corpus/hta)",
    ),
    (
        "fp32",
        "volta_sgemm_128x32_nt",
        "cuBLAS, as recorded in pytorch/kineto tb_plugin/test/gpu_metrics_input.json (fixtures/corpus/kineto)",
    ),
    (
        "fp32",
        "void cutlass::Kernel<cutlass_80_simt_sgemm_128x32_8x5_nn_align1>(Params)",
        "NVIDIA/cutlass python/cutlass_library/gemm_operation.py (opcode class simt)",
    ),
    (
        "fp32",
        "cudnn_ampere_scudnn_128x64_relu_xregs_large_nn_v1",
        "cuDNN, as recorded in facebookresearch/HolisticTraceAnalysis "
        "tests/data/critical_path/end_to_end/simple_add/input/trace.json.gz (fixtures/corpus/hta)",
    ),
    (
        "fp32",
        "void implicit_convolve_sgemm<float, float, 128, 5, 5, 3, 3, 3, 1, false, true, true>(int, int, int)",
        "cuDNN, as recorded in facebookresearch/HolisticTraceAnalysis "
        "tests/data/cupti_profiler/benchmark_result_924719_1679055439_trace.json.gz (fixtures/corpus/hta)",
    ),
    (
        "fp32",
        "void explicit_convolve_sgemm<float, int, 1024, 5, 5, 3, 3, 3, 0, false>(int, int, int)",
        "cuDNN, as recorded in pytorch/kineto tb_plugin/samples/resnet50_num_workers_0/worker0.pt.trace.json.gz "
        "(fixtures/corpus/kineto)",
    ),
    (
        "nvfp4",
        "Bmm_Bfloat16_E2m1E2m1_Fp32_t128x8x512_et128x8_m128x8x64_cga1x1x1_16dp256b_TN_transOut_schedS_bN_sm100a",
        "NVIDIA/TensorRT-LLM cpp/tensorrt_llm/kernels/trtllmGenKernels/batchedGemm/trtllmGen_bmm_export/KernelMetaInfo.h",
    ),
    (
        "fp8",
        "Bmm_E4m3_E4m3E4m3_Fp32_t128x8x128_et64x8_m64x8x32_cga1x1x1_16dp256b_TN_transOut_dsFp8_schedS_bN_sm100a",
        "NVIDIA/TensorRT-LLM cpp/tensorrt_llm/kernels/trtllmGenKernels/batchedGemm/trtllmGen_bmm_export/KernelMetaInfo.h",
    ),
    (
        "mxfp8",
        "bmm_MxE4m3_MxE2m1MxE4m3_Fp32_t128x8x256u2_s3_et64x8_m64x8x32_cga1x1x1_16dp256b_rM_TN_transOut_sm100a",
        "NVIDIA/TensorRT-LLM cpp/tensorrt_llm/kernels/trtllmGenKernels/batchedGemm/trtllmGen_bmm_export/"
        "trtllm/gen/DtypeDecl.h (dtypeToString: MxE4m3, MxE2m1; the name layout as in KernelMetaInfo.h)",
    ),
    (
        "bf16",
        "bmm_Bfloat16_MxE2m1Bfloat16_Fp32_t128x8x256_sm100a",
        "NVIDIA/TensorRT-LLM cpp/tensorrt_llm/kernels/trtllmGenKernels/batchedGemm/trtllmGen_bmm_export/"
        "trtllm/gen/DtypeDecl.h (dtypeToString: Bfloat16, MxE2m1)",
    ),
)


def pair_math(a: str, b: str) -> str:
    """The tensor-core rate class of a trtllm-gen ``Bmm_<C>_<a><b>_...`` kernel (module docstring)."""
    fa, fb = _FMT[a], _FMT[b]
    wide = max((fa, fb), key=lambda f: _BITS[f])
    bits = _BITS[wide]
    if bits >= 16:
        return wide
    if bits == 4:
        return "nvfp4" if fa == fb == "nvfp4" else "mxfp4"
    if "mx" in fa + fb:
        return "mxfp8"  # kind::mxf8f6f4: the block-scaled FP8/FP6 rate
    return wide  # fp8 or fp6: kind::f8f6f4


@lru_cache(maxsize=4096)  # a kernel name recurs on every step: the regexes once per name
def classify_one(name: str) -> str | None:
    """The math one kernel name says (see :data:`FORMS`), or None."""
    m = _BMM.search(name)
    if m:
        return pair_math(m.group(1), m.group(2))
    if "3xtf32" in name.lower():
        return None  # FP32 emulated by three TF32 products: neither peak
    if _TF32.search(name) or _CUTLASS_TF32.search(name):
        return "tf32"
    if _SIMT.search(name):
        return "fp32"
    return None


def classify(names) -> str | None:
    """The math of a list of kernel names, or None when they do not say (or disagree)."""
    found = {m for m in map(classify_one, names) if m is not None}
    if "tf32" in found and found <= {"tf32", "fp32"}:
        return "tf32"  # an FP32 SIMT helper beside a TF32 GEMM: the GEMM is TF32
    return found.pop() if len(found) == 1 else None


@register_pass("kernel math", writes=("kernel_math",), order=31)
def kernel_math(tree) -> None:
    """After "backward link" (order 30): an autograd node it linked (``perf_meta["forward"]``,
    e.g. ``AddmmBackward0``) takes the GEMM-backward model, whose name alone does not say so."""
    from perfreport.passes.backward_link import node_names

    # only a backward node can carry ``forward`` (its pass writes on no other op): their ops
    # alone are read, not every op's perf_meta
    linked = [
        o for n in node_names(tree.op_names()) for o in tree.ops_named(n) if o.perf_meta.get("forward") is not None
    ]
    for op in dict.fromkeys(ops_needing(tree, "kernel_math") + linked):
        m = classify(k.name for k in op.subtree_kernels())
        if m is not None:
            op.set_meta("kernel_math", m)


__all__ = ["FORMS", "classify", "classify_one", "kernel_math", "pair_math"]
