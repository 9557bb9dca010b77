"""As-implemented bytes of our kernel and the memory estimate, against hand-worked figures."""

from perfreport.pa.bench.kv_bytes import impl_bytes
from perfreport.pa.bench.memory import case_bytes
from perfreport.pa.bench.case import PACase, roofline_for_case

SEED = PACase(
    context=65536, batch=32, q_len=4, q_heads=16, kv_heads=1, head_dim=192, v_head_dim=128, page=64, kv_dtype="bf16"
)


def test_headline_bf16_8_partitions_by_hand():
    t = impl_bytes(SEED, 8)
    # KV: 32 seqs x 1024 pages x 64 tokens x (192 + 128) x 2 B = 1,342,177,280
    assert t["kv"] == 32 * 1024 * 64 * 320 * 2 == 1_342_177_280
    # Q reloaded by each of 8 partitions: 32 x 8 x 64 rows x 192 x 2 = 6,291,456
    assert t["query"] == 6_291_456
    # output: 32 x 4 x 16 x 128 x 2 = 524,288; block ids 32 x 1024 x 4 = 131,072
    assert t["output"] == 524_288 and t["block_table"] == 131_072
    # partials written and read: 2 x 32 x 8 x 64 x (8 + 128 x 4) = 17,039,360
    assert t["partials"] == 2 * 32 * 8 * 64 * 520 == 17_039_360
    assert t["kv_scales"] == 0
    assert t["total"] == 1_342_177_280 + 6_291_456 + 524_288 + 131_072 + 17_039_360 == 1_366_163_456
    ideal = roofline_for_case(SEED.with_storage("bf16"), None)["bytes"]
    assert 1.0 < t["total"] / ideal < 1.02  # the gap the partials and Q reloads explain: < 2%


def test_fp8_token_scales_bf16_partials_and_direct():
    c = PACase(
        context=1000, batch=2, q_len=1, q_heads=8, kv_heads=2, head_dim=64, v_head_dim=64, page=16, kv_dtype="fp8"
    )
    t = impl_bytes(c, 4, partials="bf16", scale_mode="token")
    # 63 pages of 16 (1000 tokens -> 1008 slots): KV 2 x 2 x 1008 x 128 x 1 = 516,096
    assert t["kv"] == 516_096
    # per-token scales for K and V: 2 x 2 x 1008 x 2 x 4 = 32,256
    assert t["kv_scales"] == 32_256
    # rows = 1 x 8/2 = 4; partials 2 x 2 x 2 x 4 parts x 4 rows x (8 + 64 x 2) = 17,408
    assert t["partials"] == 17_408
    assert impl_bytes(c, 1)["partials"] == 0  # one partition: the program writes the output itself


def test_memory_estimate_by_hand():
    c = PACase(
        context=1024, batch=2, q_len=2, q_heads=4, kv_heads=1, head_dim=64, v_head_dim=32, page=64, kv_dtype="bf16"
    )
    # caches 2 x 1024 x 1 x 96 x 2 = 393,216; query 2 x 2 x 4 x 64 x 2 = 2,048; ids 2 x 17 x 4 = 136
    # reference 3 x 2 x 1024 x 96 x 4 + 3 x 2 x 4 x 2 x 1024 x 4 = 2,359,296 + 196,608
    # outputs 2 x 1 backend x 2 x 2 x 4 x 32 x 2 = 2,048; no workspace, no vendor copy
    assert case_bytes(c, ["torch"]) == 393_216 + 2_048 + 136 + 2_359_296 + 196_608 + 2_048
    # triton adds its workspace at 256 partitions: 2 x 1 x 256 x 8 rows x 34 x 4 = 557,056
    both = case_bytes(c, ["torch", "triton"])
    assert both - case_bytes(c, ["torch"]) == 2_048 + 557_056


def test_vectorized_5d_v_has_the_same_model_bytes():
    from perfreport.pa.bench.case import model_for_case, op_view

    base = PACase(
        context=4096, batch=4, q_len=4, q_heads=16, kv_heads=1, head_dim=192, v_head_dim=128, page=64, kv_dtype="fp8"
    )
    five, fivev = (PACase(**{**base.__dict__, "layout": lay}) for lay in ("5D", "5DV"))
    assert op_view(fivev).args["Input Dims"][3] == [4 * 64, 1, 64 // 16, 128, 16]
    m5, why5 = model_for_case(five)
    m5v, why5v = model_for_case(fivev)
    assert not why5 and not why5v and m5v.bytes() == m5.bytes() == model_for_case(base)[0].bytes()
