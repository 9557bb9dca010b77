"""THE dtype table: trace dtype name -> (bytes per element, precision name).

Names come from two places:

* Kineto ``Input type`` strings, i.e. the C++ type names PyTorch records (``c10::BFloat16``,
  ``float``, ``long int``, ``unsigned char`` ...). Checked against torch 2.13 by profiling one
  ``aten::_to_copy`` per dtype with ``record_shapes=True``.
* torch-style / engine-style names (``torch.bfloat16``, ``bf16``, ``fp8_e4m3`` ...), so that
  strings such as a vLLM ``kv_cache_dtype`` can be resolved (``auto`` needs the model dtype:
  see :func:`resolve_kv_cache_dtype`).

Packed sub-byte types: ``c10::Float4_e2m1fn_x2`` is ONE byte per recorded element and each
element holds TWO fp4 values. Shapes in traces count packed elements, so bytes are
``numel * 1``; a model that needs the logical count (a GEMM's K) multiplies the packed
dimension by :func:`values_per_element` (= 2).

Bytes always come from the actual dtype: an unknown name raises ModelError, never "2 bytes".
"""

from __future__ import annotations

from perfreport.errors import ModelError

# name -> (bytes per recorded element, precision)
_TABLE: dict[str, tuple[float, str]] = {}


def _add(bytes_: float, precision: str, *names: str) -> None:
    for n in names:
        _TABLE[n] = (float(bytes_), precision)


# --- floating point ------------------------------------------------------------------
_add(8, "fp64", "double", "torch.float64", "torch.double", "float64", "fp64", "f64")
_add(4, "fp32", "float", "torch.float32", "torch.float", "float32", "fp32", "f32")
_add(2, "fp16", "c10::Half", "torch.float16", "torch.half", "float16", "half", "fp16", "f16")
_add(2, "bf16", "c10::BFloat16", "torch.bfloat16", "bfloat16", "bf16")
# FP8: e4m3fn (NVIDIA, MI355/gfx950), e4m3fnuz (MI300/gfx942), e5m2, e5m2fnuz. All 1 byte.
_add(
    1,
    "fp8",
    "c10::Float8_e4m3fn",
    "torch.float8_e4m3fn",
    "float8_e4m3fn",
    "c10::Float8_e4m3fnuz",
    "torch.float8_e4m3fnuz",
    "float8_e4m3fnuz",
    "c10::Float8_e5m2",
    "torch.float8_e5m2",
    "float8_e5m2",
    "c10::Float8_e5m2fnuz",
    "torch.float8_e5m2fnuz",
    "float8_e5m2fnuz",
    "fp8",
    "fp8_e4m3",
    "fp8_e5m2",
    "fp8_e4m3fn",
    "fp8_e4m3fnuz",
    "fp8_e5m2fnuz",
    "fp8_inc",
)
# e8m0: the microscaling (MX) scale format, 1 byte.
_add(1, "e8m0", "c10::Float8_e8m0fnu", "torch.float8_e8m0fnu", "float8_e8m0fnu")
# FP4 packed two per byte: 1 byte per recorded element (see module docstring).
_add(1, "fp4", "c10::Float4_e2m1fn_x2", "torch.float4_e2m1fn_x2", "float4_e2m1fn_x2", "fp4", "fp4_e2m1")
# --- complex ---------------------------------------------------------------------------
_add(4, "complex32", "c10::complex<c10::Half>", "torch.complex32", "complex32")
_add(8, "complex64", "c10::complex<float>", "torch.complex64", "complex64")
_add(16, "complex128", "c10::complex<double>", "torch.complex128", "complex128")
# --- integer / bool --------------------------------------------------------------------
_add(1, "uint8", "unsigned char", "torch.uint8", "uint8", "u8")
_add(1, "int8", "signed char", "char", "torch.int8", "int8", "i8")
_add(2, "int16", "short int", "short", "torch.int16", "int16", "torch.short")
_add(2, "uint16", "short unsigned int", "unsigned short", "torch.uint16", "uint16")
_add(4, "int32", "int", "torch.int32", "torch.int", "int32", "i32")
_add(4, "uint32", "unsigned int", "torch.uint32", "uint32")
_add(
    8, "int64", "long int", "long", "long long int", "long long", "int64_t", "torch.int64", "torch.long", "int64", "i64"
)
_add(8, "uint64", "long unsigned int", "unsigned long", "torch.uint64", "uint64")
_add(1, "bool", "bool", "torch.bool")
# c10::ScalarType names (``toString``), as ``record_param_comms`` records ``dtype``; the others
# (``BFloat16``, ``Float``, ``Half``, ``Long`` ...) resolve through their lower-case form above
_add(1, "uint8", "Byte")
_add(4, "complex32", "ComplexHalf")
_add(8, "complex64", "ComplexFloat")
_add(16, "complex128", "ComplexDouble")

# Recorded argument types that are not tensors: no device bytes.
NOT_TENSOR = frozenset(
    {
        "",
        "Scalar",
        "ScalarList",
        "TensorList",
        "GenericList",
        "Device",
        "Layout",
        "MemoryFormat",
        "ScalarType",
        "None",
        "str",
        "Generator",
    }
)

# c10::ScalarType codes, as recorded in Concrete Inputs for ScalarType arguments
# (e.g. aten::_to_copy dtype '6' = float, aiter::gemm_a16w16 otype '15' = bf16).
# Order from c10/core/ScalarType.h; checked against torch 2.13.
SCALAR_TYPE_CODES: dict[int, str] = {
    0: "unsigned char",
    1: "signed char",
    2: "short int",
    3: "int",
    4: "long int",
    5: "c10::Half",
    6: "float",
    7: "double",
    8: "c10::complex<c10::Half>",
    9: "c10::complex<float>",
    10: "c10::complex<double>",
    11: "bool",
    15: "c10::BFloat16",
    23: "c10::Float8_e5m2",
    24: "c10::Float8_e4m3fn",
    25: "c10::Float8_e5m2fnuz",
    26: "c10::Float8_e4m3fnuz",
    27: "short unsigned int",
    28: "unsigned int",
    29: "long unsigned int",
    44: "c10::Float8_e8m0fnu",
    45: "c10::Float4_e2m1fn_x2",
}

_PACKED_X2 = frozenset({"fp4"})


def _lookup(name: str) -> tuple[float, str]:
    hit = _TABLE.get(name)
    if hit is None and isinstance(name, str):
        hit = _TABLE.get(name.strip()) or _TABLE.get(name.strip().lower())
    if hit is None:
        raise ModelError(f"unknown dtype {name!r} (add it to perfreport/models/dtypes.py)")
    return hit


def is_tensor_type(name: str | None) -> bool:
    """True if ``name`` is a recorded tensor dtype (not Scalar/ScalarList/empty ...)."""
    return bool(name) and name not in NOT_TENSOR


def bytes_per_element(name: str) -> float:
    """Bytes per recorded element; 0.0 for non-tensor argument types; ModelError if unknown."""
    if name is None or name in NOT_TENSOR:
        return 0.0
    return _lookup(name)[0]


def precision_of(name: str) -> str:
    """Precision name (``bf16``, ``fp8``, ``fp32``, ``int64`` ...) of a tensor dtype."""
    if name is None or name in NOT_TENSOR:
        raise ModelError(f"{name!r} is not a tensor dtype")
    return _lookup(name)[1]


def values_per_element(name: str) -> int:
    """Logical values stored in one recorded element (2 for packed ``Float4_e2m1fn_x2``)."""
    return 2 if precision_of(name) in _PACKED_X2 else 1


# element width in bytes -> the precision whose vector peak a pure data-movement op is set against
# when only the width is known (a TensorList records no dtype): 2 bytes is BF16 or FP16, whose
# vector peaks are equal on most parts; BF16's is the lower where they differ
_WIDTH_PRECISION = {8: "fp64", 4: "fp32", 2: "bf16"}


def precision_of_width(nbytes: int) -> str:
    """Vector precision for an element width (``_WIDTH_PRECISION``); FP32 for other widths
    (1-byte types have no vector peak of their own in the specs)."""
    return _WIDTH_PRECISION.get(int(nbytes), "fp32")


def vector_precision(name: str) -> str:
    """The vector precision of a dtype for a data-movement op: its own for fp64 / fp32 / fp16 /
    bf16, else by its width (:func:`precision_of_width`)."""
    p = precision_of(name)
    return p if p in ("fp64", "fp32", "fp16", "bf16") else precision_of_width(int(bytes_per_element(name)))


def is_floating(name: str) -> bool:
    return precision_of(name) in {"fp64", "fp32", "fp16", "bf16", "fp8", "fp4", "e8m0"}


def dtype_from_code(code: int) -> str:
    """Trace dtype name for a c10::ScalarType code (``6`` -> ``float``)."""
    try:
        return SCALAR_TYPE_CODES[int(code)]
    except (KeyError, ValueError, TypeError):
        raise ModelError(f"unknown ScalarType code {code!r}") from None


def resolve_kv_cache_dtype(kv_cache_dtype: str, model_dtype: str) -> str:
    """vLLM/SGLang ``kv_cache_dtype``: ``auto`` means the model dtype; else the name itself."""
    if kv_cache_dtype in ("", "auto", None):
        return model_dtype
    _lookup(kv_cache_dtype)  # validate
    return kv_cache_dtype


__all__ = [
    "bytes_per_element",
    "precision_of",
    "values_per_element",
    "precision_of_width",
    "vector_precision",
    "is_tensor_type",
    "is_floating",
    "dtype_from_code",
    "resolve_kv_cache_dtype",
    "SCALAR_TYPE_CODES",
    "NOT_TENSOR",
]
