"""Partition planning: full last waves, the smallest such count (fewest partials)."""

from perfreport.pa.kernel.partitions import plan_partitions, wave_fill


def test_wave_fill_by_hand():
    assert wave_fill(256, 264) == 256 / 264  # one wave, 8 slots idle
    assert wave_fill(544, 264) == 544 / (3 * 264)  # the old auto: 17 x 32 CTAs, a tail of 16
    assert wave_fill(528, 264) == 1.0


def test_headline_shape_h200():
    # batch 32 x 1 KV head, 64K / 64 = 1024 pages, 132 SMs x 2 CTAs = 264 per wave:
    # P = 1..7 fill 32P/264 < 0.9 (7: 224/264 = 0.85); P = 8: 256/264 = 0.97 -> 8
    assert plan_partitions(32, 1024, 64, 132, 2) == 8
    # 16K (256 pages): same count, each partition 32 pages
    assert plan_partitions(32, 256, 64, 132, 2) == 8


def test_large_batch_needs_no_split():
    # 512 sequences: 512 / (2 x 264) = 0.97 with P = 1 (direct, no reduce)
    assert plan_partitions(512, 1024, 64, 132, 2) == 1


def test_short_contexts_cap_the_count():
    # 2 sequences of 300 tokens (5 pages of 64, min 4 pages per partition) -> at most 2 partitions
    assert plan_partitions(2, 5, 64, 132, 2) == 2
    # 300 work items on a 264 wave: P=1 0.57, 2 0.76, 3 0.85, 4 0.91 -> 4
    assert plan_partitions(300, 1024, 64, 132, 2) == 4
    assert plan_partitions(0, 10, 64, 132) == 1 and plan_partitions(4, 0, 64, 132) == 1
