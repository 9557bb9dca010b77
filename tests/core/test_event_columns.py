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
