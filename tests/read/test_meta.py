"""read/meta.py: deviceProperties keeps well-formed entries and fields, drops the rest with one line each kind."""

from __future__ import annotations

from perfreport.read.meta import check_meta


def test_no_device_properties_is_left_alone():
    meta = {"schemaVersion": 1}
    assert check_meta(meta) == []
    assert meta == {"schemaVersion": 1}


def test_a_clean_list_is_kept_as_is():
    dp = [{"id": 0, "name": "NVIDIA H100 80GB HBM3", "numSms": 132, "totalGlobalMem": 85031714816}]
    meta = {"deviceProperties": dp}
    assert check_meta(meta) == []
    assert meta["deviceProperties"] == dp


def test_not_a_list_is_dropped():
    meta = {"deviceProperties": {"id": 0}}
    assert check_meta(meta) == ["deviceProperties ignored: a dict, not a list of objects"]
    assert "deviceProperties" not in meta
    meta = {"deviceProperties": None}
    assert check_meta(meta) == ["deviceProperties ignored: a null, not a list of objects"]


def test_bad_entries_and_fields_are_counted_and_removed():
    meta = {
        "deviceProperties": [
            "garbage",
            {"id": 0, "numSms": -1, "warpSize": 32.0, "name": 7},
            7,
            {"id": True, "numSms": 108},
        ]
    }
    lines = check_meta(meta)
    assert lines == [
        "deviceProperties: 2 entries that are not objects ignored",
        "deviceProperties: 4 fields with a wrong type or a negative value ignored: "
        "[1].numSms (int), [1].warpSize (float), [1].name (int), [3].id (bool)",
    ]
    assert meta["deviceProperties"] == [{"id": 0}, {"numSms": 108}]


def test_more_than_five_bad_fields_are_shown_five_and_an_ellipsis():
    entry = {k: "x" for k in ("id", "numSms", "computeMajor", "computeMinor", "warpSize", "regsPerBlock")}
    meta = {"deviceProperties": [entry]}
    (line,) = check_meta(meta)
    assert line.startswith("deviceProperties: 6 fields with a wrong type")
    assert line.endswith("[0].warpSize (str) ...")
    assert "regsPerBlock" not in line
    assert meta["deviceProperties"] == [{}]


def test_the_input_entries_are_not_mutated():
    entry = {"id": -2, "numSms": 132}
    meta = {"deviceProperties": [entry]}
    check_meta(meta)
    assert entry == {"id": -2, "numSms": 132}
