"""The op registry: names, categories, patterns, user models."""

from types import SimpleNamespace

import pytest

from perfreport.errors import BadInput, ModelError
from perfreport.models import registry
from perfreport.models.base import PerfModel
from perfreport.models.registry import MODELS, category_of, model_for, model_for_op

CATEGORIES = {
    "GEMM",
    "SDPA_fwd",
    "SDPA_bwd",
    "CONV_fwd",
    "CONV_bwd",
    "UnaryElementwise",
    "BinaryElementwise",
    "Reduce_fwd",
    "Norm_fwd",
    "Norm_bwd",
    "RMSNorm_fwd",
    "RoPE_fwd",
    "Activation_fwd",
    "MoE",
    "KVCache",
    "Quant",
    "Inductor",
    "Pool",
    "DataMovement",
    "Resample",
    "InferenceAttention_fwd",
}
MATRIX = {"GEMM", "SDPA_fwd", "SDPA_bwd", "CONV_fwd", "CONV_bwd", "InferenceAttention_fwd"}
VECTOR_IN_MATRIX_CATEGORY = {"perfreport.models.moe.routing"}  # MoE routing ops: bookkeeping, vector units


def test_every_model_has_a_known_category_and_kind():
    for name, cls in MODELS.items():
        assert cls.category in CATEGORIES, name
        module = cls.__module__
        matrix = cls.category in MATRIX or (cls.category == "MoE" and module not in VECTOR_IN_MATRIX_CATEGORY)
        assert cls.kind == ("matrix" if matrix else "vector"), name


@pytest.mark.parametrize(
    "name,cat",
    [
        ("aten::mm", "GEMM"),
        ("aten::_scaled_mm", "GEMM"),
        ("vllm::rocm_unquantized_gemm", "GEMM"),
        ("aiter::gemm_a16w16", "GEMM"),
        ("aten::_scaled_dot_product_flash_attention", "SDPA_fwd"),
        ("flash_attn::_flash_attn_varlen_backward", "SDPA_bwd"),
        ("aten::convolution", "CONV_fwd"),
        ("aten::convolution_backward", "CONV_bwd"),
        ("aten::add_", "BinaryElementwise"),
        ("aten::copy_", "UnaryElementwise"),
        ("aten::mean", "Reduce_fwd"),
        ("aten::native_layer_norm", "Norm_fwd"),
        ("aiter::rmsnorm2d_fwd_with_add_ck", "RMSNorm_fwd"),
        ("sgl_kernel::rotary_embedding", "RoPE_fwd"),
        ("_C::silu_and_mul", "Activation_fwd"),
        ("vllm::moe_forward", "MoE"),
        ("TopK", "MoE"),
        ("aiter::fmoe_g1u1", "MoE"),
        # no model: broad fallback categories
        ("aten::linear", "GEMM"),
        ("aten::matmul", "GEMM"),
        ("nccl:all_reduce", "comm"),
        ("aten::fill_", "DataMovement"),
        ("aten::cat", "DataMovement"),
        ("aten::gather", "memcpy"),
        ("triton_poi_fused_add_0", "Inductor"),
        ("triton_red_fused_mean_1", "Inductor"),
        ("_C_cache_ops::reshape_and_cache_flash", "KVCache"),
        ("_C::static_scaled_fp8_quant", "Quant"),
        ("aten::upsample_nearest2d", "Resample"),
        ("aten::max_pool2d_with_indices_backward", "Pool"),
        ("aten::empty", "other"),
    ],
)
def test_categories(name, cat):
    assert category_of(name) == cat


def test_composites_are_not_modelled():
    for n in ("aten::linear", "aten::matmul", "aten::scaled_dot_product_attention"):
        assert model_for(n) is None


def test_exclude_flag():
    assert model_for_op("aten::mm", {"exclude_perf_model": True}) is None
    assert model_for_op("aten::mm", {}) is not None


def test_model_error_is_one_line():
    with pytest.raises(ModelError) as e:
        model_for("aten::mm")(SimpleNamespace(name="aten::mm", args={}, perf_meta={}))
    assert "\n" not in str(e.value)


def test_user_models_file(tmp_path):
    f = tmp_path / "mine.py"
    f.write_text(
        "from perfreport.models.registry import register\n"
        "from perfreport.models.base import PerfModel\n"
        "@register('mylib::fused_thing', pattern=r'mylib::fused_\\d+')\n"
        "class Fused(PerfModel):\n"
        "    category = 'BinaryElementwise'\n"
    )
    try:
        registry.load_user_models(f)
        assert model_for("mylib::fused_thing").__name__ == "Fused"
        assert model_for("mylib::fused_7").__name__ == "Fused"
        assert issubclass(model_for("mylib::fused_thing"), PerfModel)
    finally:
        MODELS.pop("mylib::fused_thing", None)
        registry.MODEL_PATTERNS[:] = [p for p in registry.MODEL_PATTERNS if "mylib" not in p[0].pattern]
    with pytest.raises(BadInput):
        registry.load_user_models(tmp_path / "missing.py")


def test_a_user_models_file_leaves_no_bytecode_beside_it(tmp_path, monkeypatch):
    """Loading --models FILE.py writes nothing next to it, even where Python writes bytecode."""
    import sys

    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    (tmp_path / "plain.py").write_text("X = 1\n")
    registry.load_user_models(tmp_path / "plain.py")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["plain.py"]
    assert sys.dont_write_bytecode is False  # restored


def test_the_table_names_each_op_once_and_imports_at_module_top():
    """One declarative table: an op name twice would silently take the later class, and a
    function-local import would hide an arrow from the import-layer contract."""
    import ast
    import collections
    import inspect

    from perfreport.models import registry as reg

    names = collections.Counter(n for _, *ns in reg.EXACT for n in ns)
    assert [n for n, c in names.items() if c > 1] == []
    assert set(reg.MODELS) >= set(names)  # user --models registrations may add more
    assert [rx for rx, _ in reg.PATTERNS] == [p.pattern for p, _ in reg.MODEL_PATTERNS[: len(reg.PATTERNS)]]
    tree = ast.parse(inspect.getsource(reg))
    local = [
        n.lineno
        for f in ast.walk(tree)
        if isinstance(f, ast.FunctionDef)
        for n in ast.walk(f)
        if isinstance(n, (ast.Import, ast.ImportFrom))
    ]
    assert local == []
