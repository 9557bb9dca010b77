"""tables/op_rows.py: the op sheets' rows, the category counts and the rows' kernel texts read
from OpTimes' arrays equal the op-by-op forms they replace, on real traces."""

from __future__ import annotations

import numpy as np
import pytest

from perfreport.pipeline import load_tree
from perfreport.tables.op_times import OpTimes
from perfreport.tables.ops import ops_summary, ops_summary_by_category


@pytest.mark.parametrize("name", ["h100_qwen_0.5b.json.gz", "idle_launch_steps.json.gz", "sglang_decode.json.gz"])
def test_op_sheets_from_the_arrays_read_as_op_by_op(name):
    """op_rows_at (numpy over OpTimes' arrays), the category counts and the kernel texts from
    OpTimes' kernel arrays read as the op-by-op forms they replace."""
    from perfreport.tables.op_times import shared
    from perfreport.tables.op_rows import _op_rows_loop, _row_kernels, op_rows_at
    from perfreport.tables.ops import _kernel_texts
    from tests.conftest import FIX

    tree = load_tree(str(FIX / name))
    times = OpTimes(tree)
    rows, src_uid = op_rows_at(tree, times)
    assert rows == _op_rows_loop(tree, times)
    assert src_uid[1].tolist() == [o.uid for o in rows]
    with shared(tree.gpu), shared(rows, src_uid):
        summ = ops_summary(tree, times, rows)
        assert ops_summary_by_category(summ, tree, rows, times).rows == ops_summary_by_category(summ, tree).rows
        gid = np.arange(len(rows)) % 7
        assert _row_kernels(rows, gid, times, tree.gpu) is not None  # (the arrays' path is taken)
        fast = _kernel_texts(rows, gid, 7, times, tree.gpu)
        assert fast == _kernel_texts(rows, gid, 7) and any(fast)
