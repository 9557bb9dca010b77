"""The dtype table."""

import pytest

from perfreport.errors import ModelError
from perfreport.models.dtypes import (
    bytes_per_element,
    dtype_from_code,
    is_tensor_type,
    precision_of,
    resolve_kv_cache_dtype,
    values_per_element,
)


@pytest.mark.parametrize(
    "name,nbytes,prec",
    [
        ("c10::BFloat16", 2, "bf16"),
        ("c10::Half", 2, "fp16"),
        ("float", 4, "fp32"),
        ("double", 8, "fp64"),
        ("c10::Float8_e4m3fn", 1, "fp8"),
        ("c10::Float8_e4m3fnuz", 1, "fp8"),
        ("c10::Float8_e5m2", 1, "fp8"),
        ("c10::Float8_e5m2fnuz", 1, "fp8"),
        ("unsigned char", 1, "uint8"),
        ("signed char", 1, "int8"),
        ("short int", 2, "int16"),
        ("short", 2, "int16"),
        ("int", 4, "int32"),
        ("long int", 8, "int64"),
        ("bool", 1, "bool"),
        ("c10::Float4_e2m1fn_x2", 1, "fp4"),
        ("c10::complex<float>", 8, "complex64"),
        ("torch.bfloat16", 2, "bf16"),
        ("bf16", 2, "bf16"),
        ("fp8", 1, "fp8"),
        ("fp8_e4m3", 1, "fp8"),
        ("float8_e4m3fnuz", 1, "fp8"),
        ("uint8", 1, "uint8"),
        ("FP8_E5M2", 1, "fp8"),
    ],
)
def test_table(name, nbytes, prec):
    assert bytes_per_element(name) == nbytes
    assert precision_of(name) == prec


def test_non_tensors_have_no_bytes():
    for n in ("Scalar", "ScalarList", ""):
        assert bytes_per_element(n) == 0.0 and not is_tensor_type(n)
    with pytest.raises(ModelError):
        precision_of("Scalar")


def test_unknown_raises_never_defaults_to_two():
    with pytest.raises(ModelError):
        bytes_per_element("c10::Mystery")


def test_fp4_packs_two_values():
    # one recorded element (one byte) of Float4_e2m1fn_x2 holds two fp4 values
    assert values_per_element("c10::Float4_e2m1fn_x2") == 2
    assert values_per_element("c10::BFloat16") == 1


def test_scalar_type_codes_and_kv_cache_dtype():
    assert dtype_from_code(6) == "float" and dtype_from_code(15) == "c10::BFloat16"
    assert dtype_from_code(26) == "c10::Float8_e4m3fnuz"
    with pytest.raises(ModelError):
        dtype_from_code(99)
    assert resolve_kv_cache_dtype("auto", "c10::BFloat16") == "c10::BFloat16"
    assert bytes_per_element(resolve_kv_cache_dtype("fp8_e4m3", "c10::BFloat16")) == 1
