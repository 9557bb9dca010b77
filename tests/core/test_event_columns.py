"""event_columns.py: the shared columns' sentinels and Sparse columns."""

from __future__ import annotations


def test_a_sparse_column_reads_like_an_array():
    from array import array

    import numpy as np

    from perfreport.event_columns import NONE, Sparse

    dur = array("d", [1.0, 2.0, 3.0])
    excl = Sparse(dur, 3, {1: 1.5})  # another column's value but where listed
    assert (excl[0], excl[1], excl[2]) == (1.0, 1.5, 3.0)
    assert np.asarray(excl).tolist() == [1.0, 1.5, 3.0] and dur[1] == 2.0
    nb = Sparse(NONE, 3, {2: 64})  # one value but where listed
    assert (nb[0], nb[2]) == (NONE, 64) and np.asarray(nb).dtype == np.int64


def test_an_int64_column_is_compacted_to_int32_only_when_every_value_fits():
    from array import array

    from perfreport.event_columns import NONE, NONE32, SIDE, SIDE32, Columns, column_value, compact

    ids = compact(array("q", [7, NONE, SIDE, (1 << 31) - 1, -5]))
    assert ids.typecode == "i" and list(ids) == [7, NONE32, SIDE32, (1 << 31) - 1, -5]
    t = Columns(ext=ids)
    t.side[("ext", 2)] = 1 << 40  # a side entry keeps its key
    assert [column_value(t, "ext", i) for i in range(5)] == [7, None, 1 << 40, (1 << 31) - 1, -5]
    for too_big in ([1 << 31], [SIDE32], [NONE32]):  # a value int32 cannot hold apart from a sentinel
        col = array("q", too_big)
        assert compact(col) is col
    wide = Columns(ext=array("q", [NONE32, -(1 << 40)]))  # an int64 column's values near int32's sentinels
    assert [column_value(wide, "ext", i) for i in range(2)] == [NONE32, -(1 << 40)]
    assert compact(array("q")).typecode == "q" and compact(array("d", [1.0])).typecode == "d"


def test_a_write_to_an_int32_column_keeps_a_value_it_cannot_hold_aside():
    from array import array

    from perfreport.event_columns import SIDE32, Columns
    from perfreport.events import GpuEvent, column_kind

    c = Columns(corr=array("i", [1, 2]), ts=array("d", [0.0, 1.0]), dur=array("d", [1.0, 1.0]))
    g = object.__new__(column_kind(GpuEvent, "kernel", c, ["k"], array("i", [0, 0])))
    g.uid, g.launcher = 1, None
    g.correlation = 1 << 33
    assert (c.corr[1], c.side[("corr", 1)], g.correlation) == (SIDE32, 1 << 33, 1 << 33)
    g.correlation = None
    assert g.correlation is None
