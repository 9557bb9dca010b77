"""The bytes around the traceEvents array (perfreport/read/envelope.py): the array found
whatever the key order and blanks, metadata before and after it decoded, no array refused."""

from __future__ import annotations

import pytest

from perfreport.errors import BadInput
from perfreport.read import read_trace
from tests.read.kit import doc as _doc


@pytest.mark.parametrize("order", ["first", "last"])
@pytest.mark.parametrize("indent", [None, 2])
def test_key_order_and_whitespace(tmp_path, order, indent):
    p = tmp_path / "t.json"
    p.write_bytes(_doc(order, indent))
    raw = read_trace(str(p))
    assert raw.meta["deviceProperties"][0]["name"] == "NVIDIA H100 80GB HBM3"
    assert raw.meta["distributedInfo"] == {"rank": 3}
    assert raw.meta["baseTimeNanoseconds"] == 1700000000000000000
    assert "traceEvents" not in raw.meta
    col = raw.records
    assert [o.name for o in col.cpu] == ["aten::mm", "cudaLaunchKernel"]  # python_function dropped
    assert col.cpu[0].args["Input Dims"] == [[4, 8], [8, 2]]
    assert col.cpu[0].args["nested"]["c"][1] == {"e": 3}
    assert col.cpu[0].ext_id == 7 and "External id" not in col.cpu[0].args
    assert len(col.gpu) == 1 and col.gpu[0].correlation == 99 and col.gpu[0].stream == 7
    assert col.process_names == {1: "python3"}


def test_missing_traceevents(tmp_path):
    p = tmp_path / "t.json"
    p.write_text('{"schemaVersion": 1}')
    with pytest.raises(BadInput, match="no traceEvents"):
        read_trace(str(p))
