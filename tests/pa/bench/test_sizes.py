"""bench-pa list flags: sizes with k/m suffixes, comma lists, choices, partitions."""

import pytest

from perfreport.pa.bench.sizes import parse_choice_list, parse_int_list, parse_partitions, parse_size, parse_size_list


@pytest.mark.parametrize(
    "text,value",
    [("300", 300), ("16k", 16384), ("64K", 65536), ("1m", 1048576), ("1M", 1048576), (" 2k ", 2048), ("1.5k", 1536)],
)
def test_parse_size(text, value):
    assert parse_size(text) == value


@pytest.mark.parametrize("text", ["", "k", "16q", "-1", "0", "1.3", "16kb", "1e3"])
def test_parse_size_rejects(text):
    with pytest.raises(ValueError, match="--context"):
        parse_size(text, "--context")


def test_lists_keep_order_and_drop_duplicates():
    assert parse_size_list("16k,64k") == [16384, 65536]
    assert parse_size_list("64k, 16k,64K") == [65536, 16384]
    with pytest.raises(ValueError, match="empty item"):
        parse_size_list("16k,,64k", "--context")


def test_int_lists_with_bounds():
    assert parse_int_list("128,192", "--v-head-dim", minimum=16, multiple_of=16) == [128, 192]
    with pytest.raises(ValueError, match="multiple of 16"):
        parse_int_list("120", "--v-head-dim", multiple_of=16)
    with pytest.raises(ValueError, match="minimum"):
        parse_int_list("8", "--page-size", minimum=16)
    with pytest.raises(ValueError, match="not an integer"):
        parse_int_list("abc", "--batch")


def test_choices_and_partitions():
    assert parse_choice_list("BF16,fp8", "--kv-dtype", {"bf16": "bf16", "fp8": "fp8"}) == ["bf16", "fp8"]
    with pytest.raises(ValueError, match="unknown value 'fp16'"):
        parse_choice_list("fp16", "--kv-dtype", {"bf16": "bf16", "fp8": "fp8"})
    assert parse_partitions("auto") == "auto" and parse_partitions("AUTO") == "auto"
    assert parse_partitions("8") == 8
    for bad in ("0", "-2", "x"):
        with pytest.raises(ValueError, match="--partitions"):
            parse_partitions(bad)
