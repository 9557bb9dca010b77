"""KV-cache write models on captured stand-in ops and the real vLLM decode capture."""

from perfreport.models.kv_cache import KVCacheWrite
from perfreport.pipeline import load_tree
from tests.models.serving_ops import FIX, model

# T 5 tokens, Hkv 2, D 16: new K + V = 2·5·2·16 = 320 elements; slot mapping 5 int64 = 40 B;
# k_scale + v_scale 0-d float = 8 B


def test_reshape_and_cache_flash_bf16_cache():
    m = model("kv_cache", "_C_cache_ops::reshape_and_cache_flash", 0)
    assert isinstance(m, KVCacheWrite) and m.category == "KVCache" and m.T == 5
    # read 320·2 + written 320·2 (bf16 cache) + 40 + 8
    assert m.bytes() == 640 + 640 + 40 + 8
    assert m.flops() == 320 and m.compute_spec() == "vector_bf16"


def test_reshape_and_cache_flash_fp8_uint8_cache():
    m = model("kv_cache", "_C_cache_ops::reshape_and_cache_flash", 1)
    assert m.params()["dtype_cache"] == "unsigned char"
    # read 320·2 + written 320·1 (FP8 stored as uint8) + 40 + 8
    assert m.bytes() == 640 + 320 + 40 + 8


def test_reshape_and_cache_5d():
    m = model("kv_cache", "_C_cache_ops::reshape_and_cache")
    assert m.bytes() == 640 + 640 + 40 + 8  # layout does not change the traffic


def test_concat_and_cache_mla():
    m = model("kv_cache", "_C_cache_ops::concat_and_cache_mla")
    # kv_c 5·32 + k_pe 5·8 = 200 elements: read 400 + written 400 + slots 40 + scale 4
    assert (m.flops(), m.bytes()) == (200, 400 + 400 + 40 + 4)


def test_sglang_store_cache():
    m = model("kv_cache", "sglang::store_cache")
    # SGLang's order (k[5, 32], v[5, 32], k_cache[24, 32], v_cache[24, 32], indices[5],
    # row_bytes, num_split, size_limit): 2-d cache rows, no scales; read 320·2 + written 320·2
    assert m.params()["new"] == ((5, 32), (5, 32)) and len(m.caches) == 2
    assert m.bytes() == 640 + 640 + 40


def test_vllm_decode_capture_row():
    tree = load_tree(str(FIX / "vllm_decode_graph.json.gz"), graph_capture=str(FIX / "vllm_decode_capture"))
    m = KVCacheWrite(tree.ops_named("_C_cache_ops::reshape_and_cache_flash")[0])
    # key/value [32, 8, 64] bf16: 2·32·8·64 = 32768 elements, read 65536 B + written 65536 B
    # (bf16 cache [224304, 32, 8, 64]) + slot mapping 32·8 = 256 + two 0-d float scales 8
    assert m.bytes() == 65536 + 65536 + 256 + 8


def test_sglang_store_cache_real_signature_2d_cache_rows():
    """SGLang python/sglang/jit_kernel/kvcache.py: ``store_cache(k, v, k_cache, v_cache,
    indices, *, row_bytes, num_split, size_limit)`` registered by ``register_custom_op``
    (python/sglang/srt/utils/custom_op.py) into ``torch.ops.sglang`` under the function's
    name, so the profiler records ``sglang::store_cache`` with 8 inputs; the caches are
    2-d rows ``[slots, H*D]``. Stand-in with that schema: scripts/capture_graph_fixtures.py."""
    from perfreport.models.registry import model_for

    tree = load_tree(str(FIX / "sglang_tiny_capture" / "capture.json.gz"))
    ops = [o for o in tree.ops_named("sglang::store_cache") if o.args["Input Dims"][0][0] == 4]
    assert len(ops) == 2 * 3  # 2 layers x (2 warm-ups + the capture) at bs 4
    op = ops[0]
    assert op.args["Input Dims"] == [[4, 32], [4, 32], [64, 32], [64, 32], [4], [], [], []]
    assert op.args["Concrete Inputs"][5:] == ["64", "0", "64"]  # row_bytes, num_split, size_limit
    assert model_for("sglang::store_cache") is KVCacheWrite
    m = KVCacheWrite(op)
    assert isinstance(m, KVCacheWrite) and m.T == 4 and len(m.caches) == 2
    # k, v [4, 32] bf16 = 256 elements: read 256·2 + written 256·2 (bf16 rows) + indices 4·8
    assert (m.flops(), m.bytes()) == (256, 512 + 512 + 32)
